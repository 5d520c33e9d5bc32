// The run: its window of assets in flight, stopping and cancelling. One asset's steps are in
// DownloadRun+Asset.swift; the placing itself, the download area and the engine are in their own files.
import Foundation
import Synchronization
import NewsstandCore
import NewsstandArchive
import NewsstandCatalog

/// One run of downloads: takes the chosen assets from selected to placed, `jobs` transfers at a time,
/// committing each durable step. The library makes one per ``Library/download(issues:options:isolation:_:)``
/// or resume, and keeps it while it runs so that `remove`, `cancelDownload` and `shutdown` can stop its
/// assets. It holds no catalog state of its own: every step re-reads the catalog under the locks.
package final class DownloadRun: Sendable {
    /// One asset chosen for a run, with what processing it needs from its issue.
    package struct WorkItem: Sendable {
        var asset: AssetDownload
        package var issueName: String
        var folderName: String
        /// A filed issue's file stem (``Issue/fileStem``): its files are named by it, and never unpacked into
        /// the folder it shares.
        var fileStem: String?

        package init(
            asset: NewsstandCore.AssetDownload, issueName: String, folderName: String, fileStem: String? = nil
        ) {
            self.asset = asset
            self.issueName = issueName
            self.folderName = folderName
            self.fileStem = fileStem
        }
    }

    /// The asset's issue was removed (or is being removed) while it was downloading: the run drops it
    /// quietly. Internal control flow, so not a `NewsstandError` code.
    struct AssetRemoved: Error {}

    package enum Outcome: Sendable {
        case finished(AssetDownload, fetched: Int64)
        case failed(NewsstandError, fetched: Int64)
        case skipped
        case interrupted
        case removed
    }

    /// The answers to an asset request that mean its (signed) link may have expired.
    static let expiredLinkStatuses: Set<Int> = [401, 403, 404, 410]

    /// What the run needs from its library: the group commit and, for subscribed issues, a fresh link.
    package struct Hooks: Sendable {
        /// Applies a catalog change through the library's group commit (false: what it meant to change is gone).
        var commit: @Sendable (@escaping CatalogChange) async throws -> Bool
        /// The feed's current URL for an asset whose link expired, if its subscription gives a new one.
        var refreshedURL: @Sendable (_ assetID: String, _ issueName: String) async -> URL?

        package init(
            commit: @escaping @Sendable (@escaping CatalogChange) async throws -> Bool,
            refreshedURL: @escaping @Sendable (_ assetID: String, _ issueName: String) async -> URL?
        ) {
            self.commit = commit
            self.refreshedURL = refreshedURL
        }
    }

    let layout: LibraryLayout
    let catalog: Catalog
    let engine: DownloadEngine
    let options: DownloadOptions
    let placer: AssetPlacer
    let spares: RecordSpares
    let syncDownloads: Bool
    let hooks: Hooks
    let onEvent: @Sendable (DownloadEvent) -> Void
    /// `jobs` transfers at a time. Flushing, placing and unpacking a finished asset take a slot of their
    /// own, so the next transfer starts while the previous file is still being flushed to disk.
    let network: AsyncSemaphore
    let finishing: AsyncSemaphore
    /// One budget for the whole run (`DownloadOptions.rateLimit`).
    let rateLimiter: RateLimiter?
    /// The asset tasks still running, by asset identifier, and the queued assets cancelled before they started.
    private let tasks = Mutex(Tasks())
    /// Set by ``stop()``: no queued asset starts any more.
    private let stopping = Mutex(false)
    /// How many assets are in flight at once (see ``run(_:)``): the `jobs` transfers and as many finishing,
    /// twice over, so that commits still batch.
    private let window: Int

    private struct Tasks {
        var running: [String: Task<Outcome, Never>] = [:]
        var cancelled: Set<String> = []
    }

    package init(
        layout: LibraryLayout, catalog: Catalog, engine: DownloadEngine, unpackLimits: UnpackLimits,
        syncDownloads: Bool, options: DownloadOptions, hooks: Hooks, onEvent: @escaping @Sendable (DownloadEvent) -> Void
    ) {
        self.layout = layout
        self.catalog = catalog
        self.engine = engine
        self.options = options
        self.placer = AssetPlacer(layout: layout, catalog: catalog, unpackLimits: unpackLimits, flushes: syncDownloads)
        self.spares = RecordSpares(layout: layout)
        self.syncDownloads = syncDownloads
        self.hooks = hooks
        self.onEvent = onEvent
        self.network = AsyncSemaphore(permits: options.jobs)
        self.finishing = AsyncSemaphore(permits: options.jobs)
        self.rateLimiter = options.rateLimit.map { RateLimiter(bytesPerSecond: $0) }
        self.window = 4 * max(options.jobs, 1)
    }

    /// The task downloading `assetID` in this run, if it is still running.
    package func task(for assetID: String) -> Task<Outcome, Never>? {
        tasks.withLock { $0.running[assetID] }
    }

    /// Every asset task still running.
    package var runningTasks: [Task<Outcome, Never>] {
        tasks.withLock { Array($0.running.values) }
    }

    /// Runs every item to its outcome. Cancelling the calling task stops them all (partial files kept).
    ///
    /// At most ``window`` assets are in flight at once (admitted, transferring, or waiting to be flushed,
    /// placed and committed); the next one starts as one ends. Every asset used to get its task up front:
    /// with 10,000 assets queued the run held 10,000 tasks and, since a short transfer is quicker than its
    /// commit, hundreds of fetched assets waiting for the finishing slots, each with its lock's descriptor
    /// and a resume record made afresh (no retired one to reuse yet). Memory now stays flat whatever the
    /// queue's length.
    package func run(_ items: [WorkItem]) async throws -> DownloadSummary {
        var summary = DownloadSummary()
        guard !items.isEmpty else { return summary }
        let layout = self.layout
        let catalog = self.catalog
        try await runBlocking {
            try POSIX.makeDirectory(layout.downloads)
            try POSIX.makeDirectory(layout.staging)
            // Content folders of removals that a crash interrupted after the catalog was updated.
            try? Trash.sweep(layout)
            DownloadArea.sweep(layout: layout, catalog: catalog)
            SpaceReserve.ensure(layout)
        }
        var started = 0
        await withTaskGroup(of: (String, Outcome).self) { group in
            /// Starts the next item, unless the run is stopping; false when there is none left to start.
            func startNext() -> Bool {
                guard started < items.count, !Task.isCancelled, !stopping.withLock({ $0 }) else { return false }
                let item = items[started]
                started += 1
                let task = tasks.withLock { tasks in
                    // Cancelled while queued (``cancel(assetID:)``): it ends at once, touching nothing.
                    let cancelled = tasks.cancelled.remove(item.asset.id) != nil
                    let task = Task { cancelled ? Outcome.interrupted : await self.process(item) }
                    tasks.running[item.asset.id] = task
                    return task
                }
                group.addTask {
                    let outcome = await withTaskCancellationHandler {
                        await task.value
                    } onCancel: {
                        task.cancel()
                    }
                    return (item.asset.id, outcome)
                }
                return true
            }
            for _ in 0..<window where !startNext() { break }
            while let (id, outcome) = await group.next() {
                _ = tasks.withLock { $0.running.removeValue(forKey: id) }
                switch outcome {
                case .finished(_, let fetched):
                    summary.finished.append(id)
                    summary.bytesReceived += fetched
                case .failed(let error, let fetched):
                    summary.failed[id] = error.message
                    summary.bytesReceived += fetched
                case .skipped: summary.skipped.append(id)
                case .interrupted: summary.interrupted.append(id)
                case .removed: break
                }
                _ = startNext()
            }
        }
        // Items never started (the run was cancelled or stopped) are interrupted: they stay in the saved
        // list for a resume.
        summary.interrupted.append(contentsOf: items[started...].map(\.asset.id))
        return summary
    }

    /// Stops the run: no queued asset starts any more (each counts as interrupted), and the running ones
    /// are cancelled. Returns at once, with the tasks it cancelled (to wait for).
    @discardableResult
    package func stop() -> [Task<Outcome, Never>] {
        stopping.withLock { $0 = true }
        let running = runningTasks
        for task in running { task.cancel() }
        return running
    }

    /// Stops one asset: cancels its task if it is running, or keeps it from starting if it is still queued
    /// (its partial file and its place in the saved list are kept either way).
    package func cancel(assetID: String) {
        let task = tasks.withLock { tasks -> Task<Outcome, Never>? in
            if let task = tasks.running[assetID] { return task }
            tasks.cancelled.insert(assetID)
            return nil
        }
        task?.cancel()
    }
}

