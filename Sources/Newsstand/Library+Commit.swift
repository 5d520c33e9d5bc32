/// Group commit: changes queued while a manifest write is in flight go out together in the next one,
/// so fifty downloads finishing at once cost a few manifest writes, not fifty.
extension Library {
    typealias Change = @Sendable (inout Manifest) -> Void

    /// Applies `change` to the manifest on disk (under the lock) and waits until it is durable.
    func commit(_ change: @escaping Change) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queuedChanges.append(QueuedChange(apply: change, continuation: continuation))
            if !isFlushing {
                isFlushing = true
                Task { await self.flushQueuedChanges() }
            }
        }
    }

    private func flushQueuedChanges() async {
        while !queuedChanges.isEmpty {
            let batch = queuedChanges
            queuedChanges = []
            let store = self.store
            let changes = batch.map(\.apply)
            do {
                let (_, manifest) = try await runBlocking {
                    try store.update { manifest in
                        for change in changes { change(&manifest) }
                    }
                }
                self.manifest = manifest
                for item in batch { item.continuation.resume() }
            } catch {
                for item in batch { item.continuation.resume(throwing: error) }
            }
        }
        isFlushing = false
    }
}

struct QueuedChange: Sendable {
    var apply: Library.Change
    var continuation: CheckedContinuation<Void, any Error>
}
