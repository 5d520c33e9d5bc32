import Foundation
import Logging
import NewsstandCore
import Synchronization
import NewsstandCatalog
import NewsstandDownload

// The actor's core: opening and lifetime. Reading is in Library+Reading.swift, adding and removing in
// Library+Changes.swift; each other part of the public API is a Library+*.swift file of its own.

/// A library of issues on disk (NewsstandKit's `NKLibrary`): the catalog in `.catalog/catalog.sqlite` (the issues'
/// JSON records, the saved download list and the event log; `library.json` is its format marker), one content
/// folder per issue, and the downloads that fill them.
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

    /// Closes the catalog's database, so that this process's last connection checkpoints its WAL (the library
    /// opens it again if it is used after). What a command does as it ends.
    package nonisolated func closeCatalog() {
        catalog.close()
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
        closeCatalog()
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
}
