import Foundation
import Logging
import NewsstandCore
import Synchronization
import NewsstandCatalog
import NewsstandDownload

// About 400 lines, one job: the actor's core (opening, lifetime, reading, adding, removing); each other
// part of the public API is a Library+*.swift file of its own.

/// A library of issues on disk (NewsstandKit's `NKLibrary`): the catalog in `.catalog/` (bucketed issue
/// records and their index; `library.json` is its format marker), one content folder per issue, and the
/// downloads that fill them.
///
/// The actor owns this process's view of the catalog; every change goes through the catalog's file lock,
/// so several processes (and several `Library` values) may share one folder. There is no
/// shared instance: open as many libraries as you need.
public actor Library {
    /// The library folder.
    public nonisolated let rootURL: URL
    /// How downloads and unpacking behave; ``reconfigure(_:)`` replaces it (a service's SIGHUP).
    public nonisolated var configuration: Configuration { settings.withLock { $0 } }
    /// Behind a lock rather than the actor, so that synchronous readers (the covers, the sync's filing)
    /// keep reading it without a hop.
    nonisolated let settings: Mutex<Configuration>
    /// Package access: the server (NewsstandServer) pages through the catalog's index and serves files by
    /// the layout's paths, without going through the actor for every read.
    package nonisolated let layout: LibraryLayout
    package nonisolated let catalog: Catalog
    nonisolated let logger: Logger
    /// Hands the events of this process's changes to the library's hooks (`config.json`), after each commit.
    /// The hooks' delivery, replaced by ``reloadHooks()``.
    nonisolated var delivery: HookDelivery { wake.current }
    nonisolated let wake: EventWake
    /// The passwords taken out of URLs and the feeds' headers (`.credentials.json`, 0600), which the engine
    /// reads for every request.
    nonisolated let credentials: CredentialStore
    /// The download runs of this process, so that `remove`, `cancelDownload` and `shutdown` reach them.
    var activeRuns: [ObjectIdentifier: DownloadRun] = [:]
    /// The HTTP engine, created on the first download (catalog commands never start event loops).
    var engine: DownloadEngine?
    /// Engines a ``reconfigure(_:)`` replaced while transfers or feed fetches may still use them: shut down
    /// with the library.
    var retiredEngines: [DownloadEngine] = []
    /// Catalog changes waiting for the next group commit.
    var queuedChanges: [QueuedChange] = []
    var isFlushing = false

    private init(rootURL: URL, configuration: Configuration, logger: Logger, catalog: Catalog, wake: EventWake) {
        self.rootURL = rootURL
        self.settings = Mutex(configuration)
        self.layout = catalog.layout
        self.catalog = catalog
        self.logger = logger
        self.wake = wake
        self.credentials = CredentialStore(layout: catalog.layout)
    }

    /// Opens the library at `url`, creating the folder on first use, and upgrades a version-1 catalog.
    /// - Parameters:
    ///   - url: The library folder.
    ///   - configuration: Download, retry and unpack settings.
    ///   - logger: Where the library logs; it never bootstraps logging itself.
    ///   - createIfMissing: Whether a missing library is created (false for read-only use: a missing
    ///     library is then an error naming the path, and nothing is created).
    ///
    /// The `hooks` of the library's `config.json` are read here: a bad section stops the opening with
    /// `.invalidHooks` naming the file, rather than changes being made whose hooks would not run.
    /// - Returns: The opened library. Call ``shutdown()`` when done, or use
    ///   ``withLibrary(at:configuration:logger:createIfMissing:isolation:_:)``, which always does.
    /// - Throws: `NewsstandError` `.libraryUnavailable`, or `.manifestUnreadable` /
    ///   `.manifestFromNewerVersion` when the catalog cannot be used (it is then left untouched).
    public static func open(
        at url: URL, configuration: Configuration = Configuration(), logger: Logger = Logger(label: "newsstand"),
        createIfMissing: Bool = true
    ) async throws -> Library {
        let root = url.standardizedFileURL
        let layout = LibraryLayout(root: root.path)
        let wake = EventWake()
        let catalog = Library.makeCatalog(layout, logger: logger, onEvents: { wake.fire() })
        let hooks = try await runBlocking {
            if createIfMissing {
                do {
                    try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
                } catch {
                    throw NewsstandError(
                        .libraryUnavailable,
                        "cannot create library folder \(layout.root): \(error.localizedDescription)", underlying: error)
                }
            } else if !POSIX.exists(layout.root) {
                throw NewsstandError(.libraryUnavailable, "there is no library at \(layout.root)")
            }
            try catalog.prepare(create: createIfMissing)
            // Folders of removals cut short (a kill after the catalog let go of them) go with the next command of
            // any kind, not only the next download with work. One lstat when there is none; skipped while a
            // removal in another process is renaming into the trash (see `Trash`). A failure only delays it.
            try? Trash.sweep(layout)
            return try HookConfiguration.read(layout.config)
        }
        let delivery = HookDelivery(catalog: catalog, layout: layout, hooks: hooks, logger: logger)
        if !hooks.isEmpty { try await runBlocking { try delivery.startNewHooks() } }
        wake.set(delivery)
        return Library(rootURL: root, configuration: configuration, logger: logger, catalog: catalog, wake: wake)
    }

    private static func makeCatalog(
        _ layout: LibraryLayout, logger: Logger, onEvents: @escaping @Sendable () -> Void
    ) -> Catalog {
        #if DEBUG
            // Lets the kill -9 tests reach a bucket split with a handful of issues.
            if let text = ProcessInfo.processInfo.environment["ISSUES_SPLIT_BYTES"], let bytes = Int(text) {
                return Catalog(
                    layout: layout, durable: true, splitBytes: bytes, splitMinLines: 1, logger: logger,
                    onEvents: onEvents, onIssuesChanged: sidecarWriter(layout, logger: logger))
            }
        #endif
        return Catalog(
            layout: layout, durable: true, logger: logger, onEvents: onEvents,
            onIssuesChanged: sidecarWriter(layout, logger: logger))
    }

    /// Opens the library at `url`, runs `body` with it, and shuts it down whatever happens: when `body`
    /// returns, throws or is cancelled (AsyncHTTPClient's `withHTTPClient`, for a library).
    /// - Parameters:
    ///   - url: The library folder.
    ///   - configuration: Download, retry and unpack settings.
    ///   - logger: Where the library logs.
    ///   - createIfMissing: Whether a missing library is created.
    ///   - isolation: Where `body` runs; the caller's actor by default.
    ///   - body: The work to do with the library. Do not let the library escape it.
    /// - Returns: What `body` returns.
    /// - Throws: What ``open(at:configuration:logger:createIfMissing:)`` or `body` throws (the library is
    ///   shut down first), or a shutdown failure after a `body` that succeeded.
    public static func withLibrary<Result>(
        at url: URL, configuration: Configuration = Configuration(), logger: Logger = Logger(label: "newsstand"),
        createIfMissing: Bool = true, isolation: isolated (any Actor)? = #isolation,
        _ body: (Library) async throws -> sending Result
    ) async throws -> sending Result {
        let library = try await open(
            at: url, configuration: configuration, logger: logger, createIfMissing: createIfMissing)
        let result: Result
        do {
            result = try await body(library)
        } catch {
            // In a task of its own, which a cancellation of this one does not reach, so that the
            // shutdown runs to its end; the body's error is the one worth reporting.
            try? await Task { try await library.shutdown() }.value
            throw error
        }
        try await Task { try await library.shutdown() }.value
        return result
    }

    /// Stops this library's downloads and its HTTP engine, if one was started. Downloads still running
    /// are cancelled and waited for (their partial files are kept, their locks released). The library can
    /// still be used afterwards: a later download starts a new engine. Waits for the hooks to be handed the
    /// events of this process's changes (each hook run is time-limited).
    ///
    /// Not calling it is safe: a library dropped without it shuts its engine down in the background.
    /// - Throws: A failure to shut the HTTP clients down.
    public func shutdown() async throws {
        // Stopped, not only cancelled: a run's queued assets must not start after its running ones ended.
        let running = activeRuns.values.flatMap { $0.stop() }
        for task in running { _ = await task.value }
        await delivery.drain()
        let engines = (engine.map { [$0] } ?? []) + retiredEngines
        engine = nil
        retiredEngines = []
        for engine in engines { try await engine.shutdown() }
        logger.debug("library shut down", metadata: ["library": "\(layout.root)"])
    }

    /// The HTTP engine, started on first use (by a download or a feed fetch).
    func startedEngine() -> DownloadEngine {
        var engineConfiguration = configuration.engine
        engineConfiguration.credentials = credentials
        let engine =
            self.engine
            ?? DownloadEngine(
                configuration: engineConfiguration, logger: logger,
                environment: Library.environment(ProcessInfo.processInfo.environment, with: configuration))
        self.engine = engine
        return engine
    }

    /// The tasks of this process's runs still downloading `assetIDs`.
    func runningTasks(for assetIDs: [String]) -> [Task<DownloadRun.Outcome, Never>] {
        activeRuns.values.flatMap { run in assetIDs.compactMap { run.task(for: $0) } }
    }

    // MARK: - Reading

    /// Every issue's summary, newest date first (then by name), read from the catalog's index: the
    /// cheap way to list a large library.
    /// - Parameter status: Only issues with this status, when given.
    public func summaries(status: Issue.Status? = nil) async throws -> [IssueSummary] {
        let catalog = self.catalog
        return try await runBlocking {
            try catalog.openIndex().sorted(status: status) { $0.summary }
        }
    }

    /// Every issue with its assets, newest date first (then by name).
    /// - Parameter status: Only issues with this status, when given.
    public func issues(status: Issue.Status? = nil) async throws -> [Issue] {
        let catalog = self.catalog
        return try await runBlocking {
            let reader = try catalog.openIndex()
            let entries = try reader.sortedEntries(status: status)
            var buffer: [UInt8] = []
            return try entries.map { entry in
                try reader.recordBytes(entry, into: &buffer)
                return try buffer.withUnsafeBufferPointer { try IssueRecord.decode($0, path: reader.path) }
            }
        }.map(located)
    }

    /// The issue with this exact name (NewsstandKit's `issue(withName:)`), or nil. Reads one record.
    public func issue(named name: String) async throws -> Issue? {
        let catalog = self.catalog
        return try await runBlocking { try catalog.issue(named: name) }.map(located)
    }

    /// The assets whose downloads were started and have not finished (NewsstandKit's
    /// `downloadingAssets`): what ``resumeDownloads(options:isolation:_:)`` picks up after a relaunch.
    public func downloadingAssets() async throws -> [AssetDownload] {
        let catalog = self.catalog
        return try await runBlocking {
            let markers = try catalog.pendingMarkers()
            var issues: [String: Issue?] = [:]
            return try markers.compactMap { marker -> AssetDownload? in
                if issues[marker.key] == nil { issues[marker.key] = .some(try catalog.record(key: marker.key)) }
                let issue = issues[marker.key] ?? nil
                // A complete asset's marker is one whose removal a power cut undid (removals are not flushed).
                return issue.flatMap(self.located)?.assets.first {
                    $0.id == marker.id && $0.state != .failed && !$0.isComplete
                }
            }
        }
    }

    /// The issue's content folder (NewsstandKit's `contentURL`). It exists once a file was placed in it;
    /// ``contentURL(forIssueNamed:)`` creates it on demand.
    public nonisolated func contentURL(for issue: Issue) -> URL {
        URL(fileURLWithPath: layout.contentFolder(issue.folderName), isDirectory: true)
    }

    /// The issue with each asset's ``AssetDownload/fileURL`` set.
    nonisolated func located(_ issue: Issue) -> Issue {
        var issue = issue
        for index in issue.assets.indices {
            issue.assets[index] = issue.assets[index].located(in: layout.contentFolder(issue.folderName))
        }
        return issue
    }

    /// The content folder of the named issue, created if it does not exist yet.
    /// - Throws: `.issueNotFound`, or `.io` when the folder cannot be created.
    public func contentURL(forIssueNamed name: String) async throws -> URL {
        let issue = try await existingIssue(named: name)
        let folder = layout.contentFolder(issue.folderName)
        let layout = self.layout
        try await runBlocking { try IssueContent.makeFolders(issue.folderName, layout: layout) }
        return URL(fileURLWithPath: folder, isDirectory: true)
    }

    func existingIssue(named name: String) async throws -> Issue {
        guard let issue = try await issue(named: name), !issue.isBeingRemoved else {
            throw notFound(name)
        }
        return issue
    }

    nonisolated func notFound(_ name: String) -> NewsstandError {
        NewsstandError.issueNotFound(name, in: layout.root)
    }

    // MARK: - Changing the catalog

    /// Adds an issue (NewsstandKit's `addIssue(withName:date:)`), with its assets in the same atomic change.
    /// - Parameters:
    ///   - name: The unique name. Any text without control characters; its folder name is derived safely.
    ///   - date: The issue's date.
    ///   - assets: Assets to add with it.
    ///   - publication: The publication it belongs to (what `prune --keep` groups by); nil to derive it
    ///     from the name (see ``Issue/publicationName``).
    ///   - template: How to file its files (``LayoutTemplate``); nil for the configuration's
    ///     ``Configuration/layoutTemplate``, and without one a folder of its own.
    /// - Returns: The new issue.
    /// - Throws: `.invalidIssueName`, `.duplicateIssue`, `.invalidURL`, or I/O errors; nothing is changed then.
    @discardableResult
    public func addIssue(
        named name: String, date: IssueDate, assets: [AssetRequest] = [], publication: String? = nil,
        template: LayoutTemplate? = nil
    ) async throws -> Issue {
        try IssueName.validate(name)
        for request in assets { try request.validate() }
        let catalog = self.catalog
        let filing = (template ?? configuration.layoutTemplate).map { Filing(template: $0, publication: publication) }
        return try await runBlocking {
            try catalog.write { changes in
                try Library.stageNewIssue(
                    named: name, date: date, assets: assets, publication: publication, filing: filing, in: &changes)
            }
        }
    }

    /// Stages a new issue, its assets and the claim of its content folder's name (or, filed by `filing`, of its
    /// place in a shared folder: decided and recorded here, before any byte is fetched, so that a killed
    /// download and its `resume` place the file at the same path).
    static func stageNewIssue(
        named name: String, date: IssueDate, assets: [AssetRequest], publication: String? = nil,
        filing: Filing? = nil, in changes: inout CatalogChanges
    ) throws -> Issue {
        if try changes.issue(named: name) != nil {
            throw NewsstandError(.duplicateIssue, "an issue named \(name.debugDescription) already exists")
        }
        let publication = publication.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        var issue: Issue
        if let filing {
            issue = try filedIssue(named: name, date: date, publication: publication, filing: filing, in: &changes)
        } else {
            let folder = try uniqueFolderName(for: name, layout: changes.catalog.layout) {
                try changes.isFolderClaimed($0)
            }
            issue = Issue(name: name, date: date, folderName: folder)
        }
        issue.publication = publication
        // Every new issue passes here (add, import, a feed's items): passwords in its URLs go to the 0600
        // credentials file, and the record, which others may read, keeps the URL without them.
        let assets = try CredentialStore(layout: changes.catalog.layout).separating(assets)
        issue.assets = assets.map { $0.makeAsset(id: Library.newAssetID()) }
        try changes.put(issue)
        changes.claimFolder(issue.claimName, forIssueNamed: name)
        issue.updateStatus()
        return issue
    }

    /// Adds an asset to an existing issue (NewsstandKit's `addAsset(with:)`).
    /// - Returns: The new asset, whose `id` identifies it from now on.
    /// - Throws: `.issueNotFound`, `.invalidURL`, `.invalidChecksum`; nothing is changed then.
    @discardableResult
    public func addAsset(toIssueNamed name: String, _ request: AssetRequest) async throws -> AssetDownload {
        try request.validate()
        let catalog = self.catalog
        let notFound = self.notFound(name)
        return try await runBlocking {
            try catalog.write { changes -> AssetDownload in
                guard var issue = try changes.issue(named: name), !issue.isBeingRemoved else { throw notFound }
                let request = try CredentialStore(layout: changes.catalog.layout).separating([request])[0]
                let asset = request.makeAsset(id: Library.newAssetID())
                issue.assets.append(asset)
                try changes.put(issue)
                return asset
            }
        }
    }

    /// Removes an issue: cancels its downloads, deletes its content folder and partial files, and
    /// drops it from the catalog.
    ///
    /// The order makes every crash recoverable: the issue is first marked as being removed (still
    /// listed), its downloads in this process are cancelled, and then ``IssueRemoval``, the one removal
    /// `prune` and `verify --repair` use too, moves its folder into the library's trash and deletes its record
    /// in one change, so its folder name is never free on disk while a record still claims it. Running
    /// `remove` again finishes an interrupted one.
    /// - Throws: `.issueNotFound`, or I/O errors (the issue then stays listed).
    public func removeIssue(named name: String) async throws {
        let layout = self.layout
        let catalog = self.catalog
        let notFound = self.notFound(name)
        let issue = try await runBlocking {
            try catalog.write { changes -> Issue in
                guard var issue = try changes.issue(named: name) else { throw notFound }
                // Every bucket the removal will rewrite (the record's, read above; the folder claim's) must be
                // readable before the issue is marked: a damaged one stops it here, with nothing changed or moved.
                _ = try changes.bucket(Catalog.folderKey(issue.claimName))
                issue.isBeingRemoved = true
                try changes.put(issue)
                return issue
            }
        }
        let ids = issue.assets.map(\.id)
        let running = runningTasks(for: ids)
        for task in running { task.cancel() }
        for task in running { _ = await task.value }
        try await runBlocking {
            _ = try IssueRemoval(catalog: catalog, layout: layout, purpose: .remove).remove([issue], markFirst: false)
        }
    }

    // MARK: - Helpers

    /// A folder name derived from `name`, not taken on disk, not reserved by the library, and not
    /// claimed (case-insensitively) by another issue, including the others of the same change.
    static func uniqueFolderName(
        for name: String, layout: LibraryLayout, isClaimed: (String) throws -> Bool
    ) throws -> String {
        var base = SafePathComponent(sanitizing: name)
        if LibraryLayout.isReserved(base.value) || LibraryLayout.isLibraryFile(base.value) {
            base = SafePathComponent(sanitizing: "_" + base.value)
        }
        var candidate = base
        var n = 2
        while try POSIX.exists(layout.contentFolder(candidate.value)) || isClaimed(candidate.value) {
            candidate = base.withSuffix(n)
            n += 1
        }
        return candidate.value
    }

    /// A new asset identifier: 64 random bits in hex, unique without consulting the catalog (the
    /// chance of two equal among a million assets is about 3 in 100 million).
    static func newAssetID() -> String {
        let id = String(RandomBytes.uint64(), radix: 16)
        return String(repeating: "0", count: 16 - id.count) + id
    }
}
