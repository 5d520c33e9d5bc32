// `struct stat` reaches Swift through libarchive's headers, so its members need this import too.
internal import CLibArchive
import Foundation

extension Library {
    /// One asset chosen for a run, with what processing it needs from its issue.
    struct WorkItem: Sendable {
        var asset: AssetDownload
        var issueName: String
        var folderName: String
    }

    enum Outcome: Sendable {
        case finished(AssetDownload, fetched: Int64)
        case failed(NewsstandError, fetched: Int64)
        case skipped
        case interrupted
        case removed
    }

    /// Downloads every asset of the named issues that is not complete yet (all issues when `names` is
    /// nil), `options.jobs` at a time, then unpacks or places each one.
    ///
    /// Failed assets are retried. The chosen assets enter the saved list of in-flight downloads before
    /// any byte moves, so a crash at any point leaves them for ``resumeDownloads(options:onEvent:)``.
    /// - Parameters:
    ///   - names: Issue names, or nil for every issue.
    ///   - options: Concurrency and archive handling.
    ///   - onEvent: Called for every event, from any thread.
    /// - Returns: What finished, failed or was skipped.
    /// - Throws: `.issueNotFound` (before anything starts) or manifest errors. Asset failures are not
    ///   thrown: they are in the summary and the manifest.
    @discardableResult
    public func download(
        issues names: [String]? = nil, options: DownloadOptions = DownloadOptions(),
        onEvent: @escaping @Sendable (DownloadEvent) -> Void = { _ in }
    ) async throws -> DownloadSummary {
        let wanted = names.map(Set.init)
        let items = try await select(requiring: names ?? []) { issue, _, _ in wanted?.contains(issue.name) ?? true }
        return try await run(items, options: options, onEvent: onEvent)
    }

    /// Resumes every download in the saved list (NewsstandKit's relaunch with `downloadingAssets`), and
    /// retries failed assets.
    /// - Parameters:
    ///   - options: Concurrency and archive handling.
    ///   - onEvent: Called for every event, from any thread.
    /// - Returns: What finished, failed or was skipped.
    @discardableResult
    public func resumeDownloads(
        options: DownloadOptions = DownloadOptions(), onEvent: @escaping @Sendable (DownloadEvent) -> Void = { _ in }
    ) async throws -> DownloadSummary {
        let items = try await select { _, asset, pending in pending.contains(asset.id) || asset.state == .failed }
        return try await run(items, options: options, onEvent: onEvent)
    }

    /// The same run as ``download(issues:options:onEvent:)``, observed as an `AsyncSequence` of events that
    /// ends when the run does (throwing if the run could not start).
    public nonisolated func downloads(
        issues names: [String]? = nil, options: DownloadOptions = DownloadOptions()
    ) -> AsyncThrowingStream<DownloadEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await self.download(issues: names, options: options) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Stops one asset's download in this process. Its partial file and its place in the saved list are
    /// kept, so a later ``resumeDownloads(options:onEvent:)`` continues it.
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
    /// - Parameter required: Issue names that must exist; if one does not, nothing is changed.
    private func select(
        requiring required: [String] = [], _ include: @escaping @Sendable (Issue, AssetDownload, Set<String>) -> Bool
    ) async throws -> [WorkItem] {
        let store = self.store
        let root = layout.root
        let (items, manifest) = try await runBlocking {
            try store.update { manifest -> [WorkItem] in
                for name in required where manifest.issueIndex(named: name) == nil {
                    throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(root)")
                }
                let pending = Set(manifest.pendingDownloads)
                var items: [WorkItem] = []
                for i in manifest.issues.indices where !manifest.issues[i].isBeingRemoved {
                    for a in manifest.issues[i].assets.indices {
                        let asset = manifest.issues[i].assets[a]
                        guard !asset.isComplete, include(manifest.issues[i], asset, pending) else { continue }
                        if asset.state != .downloaded { manifest.issues[i].assets[a].state = .downloading }
                        manifest.issues[i].assets[a].error = nil
                        if !pending.contains(asset.id) { manifest.pendingDownloads.append(asset.id) }
                        items.append(
                            WorkItem(
                                asset: manifest.issues[i].assets[a], issueName: manifest.issues[i].name,
                                folderName: manifest.issues[i].folderName))
                    }
                }
                return items
            }
        }
        self.manifest = manifest
        return items
    }

    // MARK: - Running

    private func run(
        _ items: [WorkItem], options: DownloadOptions, onEvent: @escaping @Sendable (DownloadEvent) -> Void
    ) async throws -> DownloadSummary {
        var summary = DownloadSummary()
        guard !items.isEmpty else { return summary }
        let layout = self.layout
        let snapshot = manifest
        let store = self.store
        try await runBlocking {
            try POSIX.makeDirectory(layout.downloads)
            try POSIX.makeDirectory(layout.staging)
            // Content folders of removals that a crash interrupted after the manifest was updated.
            try? Library.removeTree(layout.trash)
            Library.sweepDownloads(layout: layout, manifest: (try? store.load()) ?? snapshot)
        }
        let engine = self.engine ?? DownloadEngine(configuration: configuration, logger: logger)
        self.engine = engine

        // `jobs` transfers at a time. Flushing, placing and unpacking a finished asset take a slot of their
        // own, so the next transfer starts while the previous file is still being flushed to disk.
        let phases = Phases(
            network: AsyncSemaphore(permits: options.jobs), finishing: AsyncSemaphore(permits: options.jobs))
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
        let lock: AssetLock?
        do {
            lock = try await runBlocking { try AssetLock(tryPath: lockPath) }
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
            let store = self.store
            let latest = try await runBlocking { try store.load() }
            guard let at = latest.location(ofAsset: id), !latest.issues[at.issue].isBeingRemoved else {
                return .removed
            }
            var asset = latest.issues[at.issue].assets[at.asset]
            if asset.isComplete {
                emit(.finished(asset))
                return .finished(asset, fetched: 0)
            }
            let completed = layout.completedFile(id)
            var record = ResumeRecord.load(layout.resumeRecord(id))
            if !POSIX.exists(completed), !Library.alreadyPlaced(record, id: id, layout: layout, folder: item.folderName)
            {
                let job = DownloadEngine.Job(
                    assetID: id, url: asset.url, sha256: asset.sha256, partialPath: layout.partialFile(id),
                    recordPath: layout.resumeRecord(id))
                try Task.checkCancellation()
                let result = try await phases.network.withPermit {
                    try Task.checkCancellation()
                    return try await engine.fetch(job) { progress in
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
                fetched = result.bytesFetched
                record = result.record
                let durable = configuration.syncDownloads
                try await phases.finishing.withPermit {
                    // Flushed before it is renamed: a `.done` file is complete even after a power cut.
                    try await runBlocking {
                        if durable { try POSIX.fsyncFile(job.partialPath) }
                        try POSIX.rename(job.partialPath, completed)
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
            emit(.finished(final))
            return .finished(final, fetched: fetched)
        } catch is CancellationError {
            return .interrupted
        } catch let error as NewsstandError {
            if error.code == .removed { return .removed }
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
        try? await commit { manifest in
            manifest.updateAsset(id) { asset in
                asset.state = .failed
                asset.error = error.message
                asset.receivedBytes = received
            }
            manifest.pendingDownloads.removeAll { $0 == id }
        }
        if await manifest.location(ofAsset: id) == nil { return .removed }
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
        let store = self.store
        let issueLock = layout.issueLock(item.folderName)
        /// Runs `body` holding the issue's lock, and only while the issue is still listed and not being
        /// removed: `remove` takes the same lock, so a removed issue's folder is never recreated, and two
        /// assets of one issue never merge into its folder at once.
        @Sendable func whileListed<T>(_ body: () throws -> T) throws -> T {
            let lock = try FileLock(path: issueLock)
            defer { withExtendedLifetime(lock) {} }
            let manifest = try store.load()
            guard let at = manifest.location(ofAsset: id), !manifest.issues[at.issue].isBeingRemoved else {
                try? POSIX.unlinkIfPresent(completed)
                throw NewsstandError(.removed, "the asset \(id) was removed while it was downloading")
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
            try await commitAsset(done, finished: true)
            try? await runBlocking { try POSIX.unlinkIfPresent(layout.resumeRecord(id)) }
            return done
        }
        let isArchive = asset.unpack && POSIX.exists(completed) && ArchiveExtractor.isArchive(at: completed)
        if isArchive {
            asset.state = .downloaded
            asset.isArchive = true
            let snapshot = asset
            try await commitAsset(snapshot)
            emit(.unpacking)
            let limits = configuration.unpackLimits
            let keep = options.keepArchives
            let archived = asset
            let placedName = try await runBlocking { () -> String? in
                let staging = layout.stagingFolder(id)
                try Library.removeTree(staging)
                try POSIX.makeDirectory(staging)
                do {
                    // Extraction needs no lock: the staging folder is this asset's alone.
                    _ = try ArchiveExtractor(limits: limits).extract(archiveAt: completed, into: staging)
                    return try whileListed { () -> String? in
                        try POSIX.makeDirectory(content)
                        try mergeStaging(staging, into: content)
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
                    try? Library.removeTree(staging)
                    throw NewsstandError(
                        error.kind == .unsafeEntry || error.kind == .unsupportedEntryType
                            ? .unsafeArchiveEntry : .unpackFailed,
                        "cannot unpack \(archived.url.absoluteString) into \(item.issueName.debugDescription): \(error)",
                        underlying: error)
                } catch {
                    try? Library.removeTree(staging)
                    throw error
                }
            }
            asset.state = .unpacked
            asset.fileName = placedName
            asset.error = nil
            let done = asset
            try await commitAsset(done, finished: true)
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
        try await commitAsset(done, finished: true)
        try? await runBlocking { try POSIX.unlinkIfPresent(layout.resumeRecord(id)) }
        return done
    }

    private func commitAsset(_ asset: AssetDownload, finished: Bool = false) async throws {
        let id = asset.id
        try await commit { manifest in
            if !manifest.updateAsset(id, { $0 = asset }) { return }
            if finished { manifest.pendingDownloads.removeAll { $0 == id } }
        }
        if manifest.location(ofAsset: id) == nil {
            throw NewsstandError(.removed, "the asset \(id) was removed while it was downloading")
        }
    }

    /// Deletes an asset's partial, completed and resume files and its lock file, unless another process
    /// holds the lock (then it returns false and leaves everything).
    static func discardDownloadFiles(of id: String, layout: LibraryLayout) throws -> Bool {
        // No lock file means no process is downloading it (and perhaps no `.downloads` folder at all).
        var held: AssetLock?
        if POSIX.exists(layout.assetLock(id)) {
            guard let lock = try AssetLock(tryPath: layout.assetLock(id)) else { return false }
            held = lock
        }
        for path in [layout.partialFile(id), layout.completedFile(id), layout.resumeRecord(id), layout.assetLock(id)] {
            try POSIX.unlinkIfPresent(path)
        }
        withExtendedLifetime(held) {}
        return true
    }

    /// Best-effort clean-up of what crashes leave behind in `.downloads`: files of assets that are complete
    /// or gone (a crash between the last commit and the delete), skipping any asset another process holds,
    /// and manifest temporaries older than ten minutes.
    static func sweepDownloads(layout: LibraryLayout, manifest: Manifest) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.downloads) else { return }
        var states: [String: Bool] = [:]
        for issue in manifest.issues {
            for asset in issue.assets { states[asset.id] = asset.isComplete }
        }
        let ids = Set(names.compactMap { $0.split(separator: ".", maxSplits: 1).first.map(String.init) })
        for id in ids where states[id] ?? true {
            _ = try? discardDownloadFiles(of: id, layout: layout)
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: layout.root) {
            for name in entries where name.hasPrefix(".library.json.tmp-") {
                let path = "\(layout.root)/\(name)"
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

extension Manifest {
    /// Changes the asset with `id` (statuses follow when the change is stored). Returns false when the
    /// asset is gone.
    @discardableResult
    mutating func updateAsset(_ id: String, _ change: (inout AssetDownload) -> Void) -> Bool {
        guard let at = location(ofAsset: id) else { return false }
        change(&issues[at.issue].assets[at.asset])
        return true
    }
}

#if canImport(Glibc)
    import Glibc
#endif
