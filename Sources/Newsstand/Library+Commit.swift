import NewsstandCatalog
import NewsstandDownload

/// Group commit: catalog changes queued while a write is in flight go out together in the next one,
/// so fifty downloads finishing at once cost a few lock acquisitions and flushes, not fifty.
extension Library {
    typealias Change = CatalogChange

    /// Applies `change` under the catalog's lock and waits until it is durable.
    /// - Returns: `change`'s result.
    @discardableResult
    func commit(_ change: @escaping Change) async throws -> Bool {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
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
            let catalog = self.catalog
            let changes = batch.map(\.apply)
            do {
                let results = try await runBlocking {
                    try catalog.write { staged in try changes.map { try $0(&staged) } }
                }
                for (item, result) in zip(batch, results) { item.continuation.resume(returning: result) }
            } catch {
                for item in batch { item.continuation.resume(throwing: error) }
            }
        }
        isFlushing = false
    }
}

struct QueuedChange: Sendable {
    var apply: Library.Change
    var continuation: CheckedContinuation<Bool, any Error>
}
