import NIOPosix

/// Runs blocking work (flock, fsync, libarchive, directory walks) on NIO's shared blocking pool
/// (`NIOThreadPool.singleton`), so that it never ties up a thread of Swift's cooperative pool and the
/// number of threads it uses stays bounded (one per core by default, where Dispatch's global queue keeps
/// adding threads while they block).
///
/// The work always runs, even when the calling task is cancelled: the callers' clean-up after Ctrl-C
/// (saving resume records, writing the catalog) goes through here. `runIfActive` drops work that is still
/// queued when its task is cancelled, so it is called from a task of its own, which nothing cancels.
///
/// The bodies must not wait for one another (the pool is small): every lock they take is released before
/// they return, so a holder is always running.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await Task { try await NIOThreadPool.singleton.runIfActive(body) }.value
}
