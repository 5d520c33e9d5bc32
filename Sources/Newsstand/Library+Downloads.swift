import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandDownload

// The download API and the selection of what a run takes; the run itself is a `DownloadRun`
// (Download/DownloadRun.swift), its last step an `AssetPlacer`.

extension Library {
    typealias WorkItem = DownloadRun.WorkItem

    /// Downloads every asset of the named issues that is not complete yet (all issues when `names` is
    /// nil), `options.jobs` at a time, then unpacks or places each one, while `body` reads the events.
    ///
    /// The run lasts as long as `body`: when `body` returns (having read the events to their end, or
    /// broken out of its loop) or throws, or the calling task is cancelled, the downloads still running
    /// stop at once, and this call returns only after they have: their partial files are kept and this
    /// process holds none of their locks, so a ``resumeDownloads(options:isolation:_:)`` straight after it
    /// continues them. Scoping the run this way (as AsyncHTTPClient's `withHTTPClient` scopes a client)
    /// makes breaking out of the loop stop the work in top-level code too, where a free-standing
    /// sequence's iterator is never released. `body` runs in the caller's isolation, never on an event
    /// loop. Failed assets are retried. The chosen assets enter the saved list of in-flight downloads
    /// before any byte moves, so a crash at any point leaves them for a resume.
    /// - Parameters:
    ///   - names: Issue names, or nil for every issue.
    ///   - options: Concurrency and archive handling.
    ///   - isolation: Where `body` runs; the caller's actor by default.
    ///   - body: Reads the events; by default it reads them all, so the run goes to its end. Events not
    ///     read when `body` ends are dropped.
    /// - Returns: What finished, failed, was skipped or was interrupted (an early end of `body` or a
    ///   cancellation interrupts what was not done).
    /// - Throws: `.issueNotFound` (before anything starts, and before `body` is called), catalog
    ///   errors, or what `body` throws (after the downloads have stopped). Asset failures are not thrown:
    ///   they are events, in the summary and in the catalog.
    @discardableResult
    public func download(
        issues names: [String]? = nil, options: DownloadOptions = DownloadOptions(),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncStream<DownloadEvent>) async throws -> Void = { for await _ in $0 {} }
    ) async throws -> DownloadSummary {
        let items = try await select(names: names, resuming: false)
        return try await scopedRun(items, options: options, body)
    }

    /// Resumes every download in the saved list (NewsstandKit's relaunch with `downloadingAssets`), and
    /// retries failed assets, while `body` reads the events; scoped like
    /// ``download(issues:options:isolation:_:)``.
    /// - Parameters:
    ///   - options: Concurrency and archive handling.
    ///   - isolation: Where `body` runs; the caller's actor by default.
    ///   - body: Reads the events; by default it reads them all.
    /// - Returns: What finished, failed, was skipped or was interrupted.
    /// - Throws: Catalog errors, or what `body` throws (after the downloads have stopped).
    @discardableResult
    public func resumeDownloads(
        options: DownloadOptions = DownloadOptions(), isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncStream<DownloadEvent>) async throws -> Void = { for await _ in $0 {} }
    ) async throws -> DownloadSummary {
        let items = try await select(names: nil, resuming: true)
        return try await scopedRun(items, options: options, body)
    }

    /// Runs `items` in a child task while `body` reads their events, and stops the run when `body` ends.
    private func scopedRun(
        _ items: [WorkItem], options: DownloadOptions, isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncStream<DownloadEvent>) async throws -> Void
    ) async throws -> DownloadSummary {
        // Unbounded: progress is throttled to a few events a second per asset, and a slow reader must not
        // stall the transfers.
        let (events, continuation) = AsyncStream<DownloadEvent>.makeStream()
        return try await withThrowingTaskGroup(of: DownloadSummary.self) { group in
            group.addTask {
                defer { continuation.finish() }
                return try await self.run(items, options: options) { continuation.yield($0) }
            }
            do {
                try await body(events)
            } catch {
                group.cancelAll()
                // The body's error is the one to report; the run's own end is in the catalog.
                _ = try? await group.next()
                throw error
            }
            // Breaking out early stops what is left; after a full read the run has already ended.
            group.cancelAll()
            return try await group.next() ?? DownloadSummary()
        }
    }

    /// Stops one asset's download in this process. Its partial file and its place in the saved list are
    /// kept, so a later ``resumeDownloads(options:isolation:_:)`` continues it.
    public func cancelDownload(assetID: String) {
        for run in activeRuns.values { run.cancel(assetID: assetID) }
    }

    /// Bytes of a partial download on disk right now (for live progress of another process's download).
    public nonisolated func bytesOnDisk(assetID: String) -> Int64? {
        POSIX.fileSize(layout.partialFile(assetID)) ?? POSIX.fileSize(layout.completedFile(assetID))
    }

    /// The size the server announced for a download in progress (from its resume record), if known.
    public nonisolated func expectedBytesOnDisk(assetID: String) -> Int64? {
        ResumeRecord.load(layout.resumeRecord(assetID))?.expectedBytes
    }

    // MARK: - Selection

    /// Marks the chosen incomplete assets as downloading and puts them in the saved list, in writes of at most
    /// ``selectionChunk`` issues.
    ///
    /// The issues to look at are found first, without the lock: the named ones; for a resume, those the
    /// saved list points to (failed assets stay in it, so they are retried); otherwise every issue the
    /// index does not show as available. Then their records are read and changed under the lock.
    /// - Parameter names: Issue names that must all exist (if one does not, nothing is changed), or nil.
    private func select(names: [String]?, resuming: Bool) async throws -> [WorkItem] {
        let catalog = self.catalog
        let root = layout.root
        return try await runBlocking {
            var keys: [String]
            var saved: [String: String] = [:]  // asset id → issue key
            if resuming {
                for marker in try catalog.pendingMarkers() { saved[marker.id] = marker.key }
                keys = Array(Set(saved.values)).sorted()
            } else if let names {
                var seen = Set<String>()
                keys = names.map(Catalog.key(for:)).filter { seen.insert($0).inserted }
            } else {
                keys = try catalog.issueKeys(excluding: .available)
            }
            // In changes of at most `selectionChunk` issues: one change of 10,000 held every record it
            // rewrote at once (64 MiB of a 10,000-asset download's 96 MiB peak, sampled). A kill between two
            // changes leaves the first ones' assets queued, as a kill during the run would.
            var items: [WorkItem] = []
            var seen = Set<String>()
            let size = Library.selectionChunk
            let chunks = stride(from: 0, to: max(keys.count, 1), by: size).map { keys[$0..<min($0 + size, keys.count)] }
            for (number, chunk) in chunks.enumerated() {
                items += try catalog.write { changes -> [WorkItem] in
                    if number == 0 {
                        for name in names ?? [] where try changes.issue(named: name) == nil {
                            throw NewsstandError.issueNotFound(name, in: root)
                        }
                    }
                    var items: [WorkItem] = []
                    for key in chunk {
                        items += try Library.markForRun(key, resuming: resuming, saved: saved, seen: &seen, in: &changes)
                    }
                    // Saved entries whose asset or issue is gone point nowhere.
                    if number == chunks.count - 1 {
                        for id in saved.keys where !seen.contains(id) { changes.clearPending(id) }
                    }
                    return items
                }
            }
            // The selection's records and buffers are garbage now: handed back before the run starts on top.
            POSIX.returnFreedMemory()
            return items
        }
    }

    /// Issues marked for a run per catalog change (``select(names:resuming:)``).
    static let selectionChunk = 1_000

    /// Marks the incomplete assets of the issue at `key` as downloading and puts them in the saved list (for a
    /// resume, only those the list already holds); a complete asset still listed leaves the list. Each asset
    /// seen goes into `seen`.
    /// - Returns: The assets the run takes.
    private static func markForRun(
        _ key: String, resuming: Bool, saved: [String: String], seen: inout Set<String>, in changes: inout CatalogChanges
    ) throws -> [WorkItem] {
        guard var issue = try changes.issue(key: key), !issue.isBeingRemoved else { return [] }
        var items: [WorkItem] = []
        for a in issue.assets.indices {
            let asset = issue.assets[a]
            seen.insert(asset.id)
            if resuming, saved[asset.id] == nil { continue }
            if asset.isComplete {
                if saved[asset.id] != nil { changes.clearPending(asset.id) }
                continue
            }
            if asset.state != .downloaded { issue.assets[a].state = .downloading }
            issue.assets[a].error = nil
            if saved[asset.id] != key { changes.markPending(asset.id, issueNamed: issue.name) }
            items.append(
                WorkItem(asset: issue.assets[a], issueName: issue.name, folderName: issue.folderName, fileStem: issue.fileStem))
        }
        try changes.put(issue)
        return items
    }

    // MARK: - Running

    /// Runs `items` in a run object of their own, registered while it runs so that `remove`,
    /// ``cancelDownload(assetID:)`` and ``shutdown()`` reach its assets.
    private func run(
        _ items: [WorkItem], options: DownloadOptions, onEvent: @escaping @Sendable (DownloadEvent) -> Void
    ) async throws -> DownloadSummary {
        guard !items.isEmpty else { return DownloadSummary() }
        let engine = startedEngine()
        let hooks = DownloadRun.Hooks(
            commit: { [self] change in
                let landed = try await self.commit(change)
                self.noteFreeSpace()
                return landed
            },
            refreshedURL: { [self] id, name in await self.refreshedURL(of: id, issueNamed: name) })
        let run = DownloadRun(
            layout: layout, catalog: catalog, engine: engine, unpackLimits: configuration.unpackLimits,
            syncDownloads: configuration.syncDownloads, options: options,
            hooks: hooks, onEvent: onEvent)
        let key = ObjectIdentifier(run)
        activeRuns[key] = run
        defer { activeRuns[key] = nil }
        let summary = try await run.run(items)
        await afterRun(issueNames: Set(items.map(\.issueName)))
        return summary
    }
}
