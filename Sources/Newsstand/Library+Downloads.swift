internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation

// Over 400 lines, one job: taking the chosen assets from selection to placed (selection, the run loop,
// per-asset steps, placing, sweeping). Issue 9 moves it into a per-run object under Download/.

extension Library {
    /// One asset chosen for a run, with what processing it needs from its issue.
    struct WorkItem: Sendable {
        var asset: AssetDownload
        var issueName: String
        var folderName: String
    }

    /// The asset's issue was removed (or is being removed) while it was downloading: the run drops it
    /// quietly. Internal control flow, so not a `NewsstandError` code.
    struct AssetRemoved: Error {}

    enum Outcome: Sendable {
        case finished(AssetDownload, fetched: Int64)
        case failed(NewsstandError, fetched: Int64)
        case skipped
        case interrupted
        case removed
    }

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
        activeTasks[assetID]?.cancel()
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

    /// Marks the chosen incomplete assets as downloading and puts them in the saved list, in one write.
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
                keys = try catalog.openIndex().liveEntries()
                    .filter { $0.summary.status != .available && !$0.summary.isBeingRemoved }.map(\.key.text)
            }
            return try catalog.write { changes -> [WorkItem] in
                for name in names ?? [] where try changes.issue(named: name) == nil {
                    throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(root)")
                }
                var items: [WorkItem] = []
                var seen = Set<String>()
                for key in keys {
                    guard var issue = try changes.issue(key: key), !issue.isBeingRemoved else { continue }
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
                            WorkItem(asset: issue.assets[a], issueName: issue.name, folderName: issue.folderName))
                    }
                    try changes.put(issue)
                }
                // Saved entries whose asset or issue is gone point nowhere.
                for id in saved.keys where !seen.contains(id) { changes.clearPending(id) }
                return items
            }
        }
    }

    // MARK: - Running

    private func run(
        _ items: [WorkItem], options: DownloadOptions, onEvent: @escaping @Sendable (DownloadEvent) -> Void
    ) async throws -> DownloadSummary {
        var summary = DownloadSummary()
        guard !items.isEmpty else { return summary }
        let layout = self.layout
        let catalog = self.catalog
        try await runBlocking {
            try POSIX.makeDirectory(layout.downloads)
            try POSIX.makeDirectory(layout.staging)
            // Content folders of removals that a crash interrupted after the catalog was updated.
            try? TreeRemover.remove(layout.trash)
            Library.sweepDownloads(layout: layout, catalog: catalog)
            SpaceReserve.ensure(layout)
        }
        let engine = self.engine ?? DownloadEngine(configuration: configuration, logger: logger)
        self.engine = engine

        // `jobs` transfers at a time. Flushing, placing and unpacking a finished asset take a slot of their
        // own, so the next transfer starts while the previous file is still being flushed to disk.
        let phases = Phases(
            network: AsyncSemaphore(permits: options.jobs), finishing: AsyncSemaphore(permits: options.jobs),
            rateLimiter: options.rateLimit.map { RateLimiter(bytesPerSecond: $0) })
        await withTaskGroup(of: (String, Outcome).self) { group in
            for item in items {
                let task = Task { [self] in
                    await self.process(item, engine: engine, options: options, phases: phases, onEvent: onEvent)
                }
                activeTasks[item.asset.id] = task
                group.addTask {
                    let outcome = await withTaskCancellationHandler {
                        await task.value
                    } onCancel: {
                        task.cancel()
                    }
                    return (item.asset.id, outcome)
                }
            }
            while let (id, outcome) = await group.next() {
                activeTasks[id] = nil
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
            }
        }
        if Task.isCancelled {
            summary.interrupted.append(
                contentsOf: items.map(\.asset.id).filter {
                    !summary.finished.contains($0) && summary.failed[$0] == nil && !summary.skipped.contains($0)
                        && !summary.interrupted.contains($0)
                })
        }
        return summary
    }

    /// Takes one asset from wherever it stands to complete: fetch (or find the finished file from a
    /// run that crashed), verify, then place or unpack, committing each durable step.
    struct Phases: Sendable {
        var network: AsyncSemaphore
        var finishing: AsyncSemaphore
        /// One budget for the whole run (`DownloadOptions.rateLimit`).
        var rateLimiter: RateLimiter?
    }

    private nonisolated func process(
        _ item: WorkItem, engine: DownloadEngine, options: DownloadOptions, phases: Phases,
        onEvent: @escaping @Sendable (DownloadEvent) -> Void
    ) async -> Outcome {
        let id = item.asset.id
        let emit: @Sendable (DownloadEvent.Kind) -> Void = { kind in
            onEvent(DownloadEvent(assetID: id, issueName: item.issueName, url: item.asset.url, kind: kind))
        }
        let layout = self.layout
        let lockPath = layout.assetLock(id)
        let lock: FileLock?
        do {
            lock = try await runBlocking { try FileLock.try(path: lockPath) }
        } catch {
            return await fail(item, NewsstandError(.io, "cannot lock \(lockPath): \(error)"), fetched: 0, emit: emit)
        }
        guard let lock else {
            emit(.skipped(reason: "another issues process is downloading it"))
            return .skipped
        }
        defer { withExtendedLifetime(lock) {} }

        var fetched: Int64 = 0
        do {
            // Another process may have finished (or removed) it between our selection and our lock.
            let catalog = self.catalog
            let latest = try await runBlocking { try catalog.issue(named: item.issueName) }
            guard let latest, !latest.isBeingRemoved, var asset = latest.assets.first(where: { $0.id == id }) else {
                return .removed
            }
            if asset.isComplete {
                emit(.finished(located(asset, folder: item.folderName)))
                return .finished(asset, fetched: 0)
            }
            let completed = layout.completedFile(id)
            var record = ResumeRecord.load(layout.resumeRecord(id))
            // A finished file left by an earlier run may have been cut short on disk since, or replaced by a
            // link: checked again before it is trusted, else fetched again from zero.
            let expected = record?.expectedBytes
            let sha256 = asset.sha256
            if POSIX.exists(completed),
                !(try await runBlocking { Library.isIntact(completed, expectedBytes: expected, sha256: sha256) })
            {
                try await runBlocking {
                    try POSIX.unlinkIfPresent(completed)
                    try POSIX.unlinkIfPresent(layout.resumeRecord(id))
                }
                record = nil
            }
            if !POSIX.exists(completed), !Library.alreadyPlaced(record, id: id, layout: layout, folder: item.folderName)
            {
                var job = DownloadEngine.Job(
                    assetID: id, url: asset.url, sha256: asset.sha256, headers: asset.headers,
                    partialPath: layout.partialFile(id),
                    recordPath: layout.resumeRecord(id), rateLimiter: phases.rateLimiter)
                try Task.checkCancellation()
                var refreshed = false
                var result: DownloadEngine.Result
                while true {
                    let attempt = job
                    do {
                        result = try await phases.network.withPermit {
                            try Task.checkCancellation()
                            return try await engine.fetch(attempt) { progress in
                                switch progress {
                                case .started(let from, let expected):
                                    emit(.started(resumingFrom: from, expectedBytes: expected))
                                case .bytes(let received, let expected, let rate):
                                    emit(.progress(receivedBytes: received, expectedBytes: expected, bytesPerSecond: rate))
                                case .retrying(let attempt, let delay, let reason):
                                    emit(.retrying(attempt: attempt, delay: delay, reason: reason))
                                }
                            }
                        }
                        break
                    } catch let error as NewsstandError
                        where !refreshed && latest.origin != nil && Library.expiredLinkStatuses.contains(error.httpStatus ?? 0)
                    {
                        // A signed link that expired: ask the feed once for the item's current URL, and continue
                        // the partial file there (the engine sends If-Range, so no byte already here is refetched).
                        refreshed = true
                        guard let url = await refreshedURL(of: id, issueNamed: item.issueName), url != job.url else {
                            throw error
                        }
                        emit(.retrying(attempt: 1, delay: .zero, reason: "\(error.message); the feed now gives \(url.absoluteString)"))
                        job.url = url
                    }
                }
                // The feed's new link is what the catalog now holds; the commit below must not put back the old.
                asset.url = job.url
                fetched = result.bytesFetched
                record = result.record
                let durable = configuration.syncDownloads
                let partialPath = job.partialPath
                try await phases.finishing.withPermit {
                    // Flushed before it is renamed: a `.done` file is complete even after a power cut.
                    try await runBlocking {
                        if durable { try POSIX.fsyncFile(partialPath) }
                        try POSIX.rename(partialPath, completed)
                    }
                }
            }
            asset.receivedBytes = POSIX.fileSize(completed) ?? record?.expectedBytes ?? asset.receivedBytes
            asset.expectedBytes = record?.expectedBytes ?? asset.receivedBytes
            let finalRecord = record
            let ready = asset
            let final = try await phases.finishing.withPermit {
                try await self.finish(ready, item: item, record: finalRecord, options: options, emit: emit)
            }
            // Safe to drop while held: whoever locks a fresh file next re-reads the state and finds it complete.
            try? POSIX.unlinkIfPresent(lockPath)
            emit(.finished(located(final, folder: item.folderName)))
            return .finished(final, fetched: fetched)
        } catch is CancellationError {
            return .interrupted
        } catch is AssetRemoved {
            return .removed
        } catch let error as NewsstandError {
            return await fail(item, error, fetched: fetched, emit: emit)
        } catch {
            return await fail(
                item, NewsstandError(.io, "\(item.asset.url.absoluteString): \(error)", underlying: error),
                fetched: fetched, emit: emit)
        }
    }

    private nonisolated func fail(
        _ item: WorkItem, _ error: NewsstandError, fetched: Int64, emit: @Sendable (DownloadEvent.Kind) -> Void
    ) async -> Outcome {
        let id = item.asset.id
        let received = bytesOnDisk(assetID: id) ?? 0
        // The asset stays in the saved list, so that `resume` retries it.
        func record() async throws -> Bool {
            try await commit { changes in
                try changes.updateAsset(id, ofIssueNamed: item.issueName) { asset in
                    asset.state = .failed
                    asset.error = error.message
                    asset.receivedBytes = received
                }
            }
        }
        var listed: Bool?
        do {
            listed = try await record()
        } catch {
            // Most likely the disk is full (this very download may have filled it): give up the reserve so that
            // the failure is stored, rather than leaving the asset `downloading`.
            if SpaceReserve.release(layout) {
                listed = try? await record()
            }
        }
        if listed == false { return .removed }
        emit(.failed(error))
        return .failed(error, fetched: fetched)
    }

    /// Places a complete, verified file: unpacks an archive, or moves a plain file into the content folder.
    private nonisolated func finish(
        _ asset: AssetDownload, item: WorkItem, record: ResumeRecord?, options: DownloadOptions,
        emit: @escaping @Sendable (DownloadEvent.Kind) -> Void
    ) async throws -> AssetDownload {
        let layout = self.layout
        let id = asset.id
        let completed = layout.completedFile(id)
        let content = layout.contentFolder(item.folderName)
        var asset = asset
        let catalog = self.catalog
        let issueLock = layout.issueLock(item.folderName)
        /// Runs `body` holding the issue's lock, and only while the issue is still listed and not being
        /// removed: `remove` takes the same lock, so a removed issue's folder is never recreated, and two
        /// assets of one issue never merge into its folder at once.
        @Sendable func whileListed<T>(_ body: () throws -> T) throws -> T {
            let lock = try FileLock(path: issueLock)
            defer { withExtendedLifetime(lock) {} }
            let issue = try catalog.issue(named: item.issueName)
            guard let issue, !issue.isBeingRemoved, issue.assets.contains(where: { $0.id == id }) else {
                try? POSIX.unlinkIfPresent(completed)
                throw AssetRemoved()
            }
            return try body()
        }
        // A crash after a kept archive was merged and placed, before the `unpacked` commit: finish the commit.
        if asset.unpack, asset.isArchive == true, let placed = record?.placedAs,
            Library.alreadyPlaced(record, id: id, layout: layout, folder: item.folderName)
        {
            asset.state = .unpacked
            asset.fileName = placed
            asset.error = nil
            let done = asset
            try await commitAsset(done, of: item, finished: true)
            try? await runBlocking { try POSIX.unlinkIfPresent(layout.resumeRecord(id)) }
            return done
        }
        let isArchive = asset.unpack && POSIX.exists(completed) && ArchiveExtractor.isArchive(at: completed)
        if isArchive {
            asset.state = .downloaded
            asset.isArchive = true
            let snapshot = asset
            try await commitAsset(snapshot, of: item)
            emit(.unpacking)
            let limits = configuration.unpackLimits
            let keep = options.keepArchives
            let archived = asset
            let placedName = try await runBlocking { () -> String? in
                let staging = layout.stagingFolder(id)
                try TreeRemover.remove(staging)
                try Library.checkSpaceToUnpack(completed, asset: archived, issueName: item.issueName, layout: layout)
                try POSIX.makeDirectory(staging)
                do {
                    // Extraction needs no lock: the staging folder is this asset's alone.
                    let summary = try ArchiveExtractor(limits: limits).extract(archiveAt: completed, into: staging)
                    return try whileListed { () -> String? in
                        try POSIX.makeDirectory(content)
                        try mergeStaging(staging, into: content)
                        // What verify checks the folder against; before the commit, so that an unpacked
                        // asset always has it (a crash before the commit redoes the unpack and rewrites it).
                        try ContentRecord(assetID: id, entries: summary.placed).write(layout: layout)
                        guard keep else { return nil }
                        var updated = record ?? ResumeRecord(url: archived.url.absoluteString)
                        return try Library.placeFile(
                            completed, named: FileNaming.name(for: archived, record: record), in: content
                        ) { chosen in
                            updated.placedAs = chosen
                            try updated.save(layout.resumeRecord(id))
                        }
                    }
                } catch let error as ArchiveError {
                    try? TreeRemover.remove(staging)
                    throw NewsstandError(
                        error.kind == .unsafeEntry || error.kind == .unsupportedEntryType
                            ? .unsafeArchiveEntry
                            : error.kind == .insufficientSpace ? .insufficientSpace : .unpackFailed,
                        "cannot unpack \(archived.url.absoluteString) into \(item.issueName.debugDescription): \(error)",
                        underlying: error)
                } catch {
                    try? TreeRemover.remove(staging)
                    throw error
                }
            }
            asset.state = .unpacked
            asset.fileName = placedName
            asset.error = nil
            let done = asset
            try await commitAsset(done, of: item, finished: true)
            try? await runBlocking {
                try POSIX.unlinkIfPresent(completed)
                try POSIX.unlinkIfPresent(layout.resumeRecord(id))
            }
            return done
        }
        // A plain file (or an archive kept whole). The chosen name goes into the resume record before the
        // move, so a crash between the move and the manifest write is recognised on resume.
        let name: String
        if let placed = record?.placedAs, Library.alreadyPlaced(record, id: id, layout: layout, folder: item.folderName)
        {
            name = placed
        } else {
            let candidate = FileNaming.name(for: asset, record: record)
            let url = asset.url.absoluteString
            name = try await runBlocking {
                try whileListed {
                    try POSIX.makeDirectory(content)
                    var updated = record ?? ResumeRecord(url: url)
                    return try Library.placeFile(completed, named: candidate, in: content) { chosen in
                        updated.placedAs = chosen
                        try updated.save(layout.resumeRecord(id))
                    }
                }
            }
        }
        asset.state = .downloaded
        asset.isArchive = false
        asset.fileName = name
        asset.error = nil
        let done = asset
        try await commitAsset(done, of: item, finished: true)
        try? await runBlocking { try POSIX.unlinkIfPresent(layout.resumeRecord(id)) }
        return done
    }

    private func commitAsset(_ asset: AssetDownload, of item: WorkItem, finished: Bool = false) async throws {
        let id = asset.id
        let listed = try await commit { changes in
            guard try changes.updateAsset(id, ofIssueNamed: item.issueName, { $0 = asset }) else { return false }
            if finished { changes.clearPending(id) }
            return true
        }
        if !listed {
            throw AssetRemoved()
        }
    }

    /// Deletes an asset's partial, completed and resume files and its lock file, unless another process
    /// holds the lock (then it returns false and leaves everything).
    static func discardDownloadFiles(of id: String, layout: LibraryLayout) throws -> Bool {
        // No lock file means no process is downloading it (and perhaps no `.downloads` folder at all).
        var held: FileLock?
        if POSIX.exists(layout.assetLock(id)) {
            guard let lock = try FileLock.try(path: layout.assetLock(id)) else { return false }
            held = lock
        }
        for path in [layout.partialFile(id), layout.completedFile(id), layout.resumeRecord(id), layout.assetLock(id)] {
            try POSIX.unlinkIfPresent(path)
        }
        withExtendedLifetime(held) {}
        return true
    }

    /// Best-effort clean-up of what crashes leave behind in `.downloads`: the files of assets that are
    /// not in the saved list (complete, or gone: a crash between the last commit and the delete),
    /// skipping any asset another process holds, and catalog temporaries older than ten minutes.
    static func sweepDownloads(layout: LibraryLayout, catalog: Catalog) {
        // The folder is listed before the saved list is read: an asset's files are only ever created
        // after its entry, so nothing in flight can look stale.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.downloads),
            let saved = try? Set(catalog.pendingMarkers().map(\.id))
        else { return }
        let ids = Set(names.compactMap { $0.split(separator: ".", maxSplits: 1).first.map(String.init) })
        for id in ids where !saved.contains(id) {
            _ = try? discardDownloadFiles(of: id, layout: layout)
        }
        for folder in [layout.root, layout.catalog] {
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in entries where name.hasPrefix(".library.json.tmp-") || name.hasPrefix(".intent.tmp-") {
                let path = "\(folder)/\(name)"
                if let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                    date.timeIntervalSinceNow < -600
                {
                    try? POSIX.unlinkIfPresent(path)
                }
            }
        }
    }

    /// Whether a crashed run already moved this asset's file into the content folder.
    static func alreadyPlaced(_ record: ResumeRecord?, id: String, layout: LibraryLayout, folder: String) -> Bool {
        guard let record, let placed = record.placedAs, !POSIX.exists(layout.completedFile(id)) else { return false }
        let size = POSIX.fileSize("\(layout.contentFolder(folder))/\(placed)")
        return size != nil && (record.expectedBytes == nil || size == record.expectedBytes)
    }

    /// Moves `file` into `folder` under `name`, or `name (2)`, `name (3)`… if taken, never replacing an
    /// existing file (link(2) refuses to). `willPlace` runs before each try with the name about to be used.
    /// - Returns: The name used.
    /// Whether a finished file is what it claims: a regular file (not a link), of the expected size and
    /// SHA-256 when those are known.
    static func isIntact(_ path: String, expectedBytes: Int64?, sha256: String?) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        if let expectedBytes, Int64(info.st_size) != expectedBytes { return false }
        if let sha256 { return CatalogVerifier.sha256(of: path) == sha256.lowercased() }
        return true
    }

    static func placeFile(
        _ file: String, named name: String, in folder: String, willPlace: (String) throws -> Void = { _ in }
    ) throws -> String {
        var n = 1
        while true {
            let candidate = n == 1 ? name : FileNaming.withSuffix(name, n)
            try willPlace(candidate)
            let target = "\(folder)/\(candidate)"
            if link(file, target) == 0 {
                try POSIX.unlinkIfPresent(file)
                return candidate
            }
            let code = errno
            guard code == EEXIST else { throw NewsstandError.posix(code, "cannot place \(file) as", path: target) }
            // A crash between link and unlink left both names on one inode: finish the move.
            var a = stat()
            var b = stat()
            if stat(file, &a) == 0, stat(target, &b) == 0, a.st_ino == b.st_ino, a.st_dev == b.st_dev {
                try POSIX.unlinkIfPresent(file)
                return candidate
            }
            n += 1
        }
    }
}

extension CatalogChanges {
    /// Changes the asset with `id` of the named issue (statuses follow when the change is stored).
    /// - Returns: false when the issue or the asset is gone, or the issue is being removed.
    mutating func updateAsset(
        _ id: String, ofIssueNamed name: String, _ change: (inout AssetDownload) -> Void
    ) throws -> Bool {
        guard var issue = try issue(named: name), !issue.isBeingRemoved,
            let index = issue.assets.firstIndex(where: { $0.id == id })
        else { return false }
        change(&issue.assets[index])
        try put(issue)
        return true
    }
}

#if canImport(Glibc)
    import Glibc
#endif
