import Dispatch

/// Runs blocking work (flock, fsync, libarchive, directory walks) on a Dispatch worker thread, so that
/// it never ties up a thread of Swift's cooperative pool.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}
