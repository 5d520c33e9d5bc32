import Foundation
import Hummingbird
import Logging
import Newsstand
import NewsstandCore
import NewsstandDownload
import ServiceLifecycle

/// `issues serve`: the shelf in a browser, the JSON API and feeds out, over one library, beside any CLI
/// process using it (every change goes through the catalog's locks).
///
/// The HTTP server and the background downloads are `Service`s: ``services(onListening:)`` hands them to
/// the caller's `ServiceGroup`, where later services (a scheduler) join them, and SIGINT/SIGTERM stop them
/// all gracefully.
public struct IssuesServer: Sendable {
    let state: ServerState
    let options: ServeOptions
    /// The token made by this start (to be shown once), or nil when there is none or it existed already.
    public let newToken: String?

    /// Prepares a server for `library`. Beyond loopback the library's access token is read, or made.
    /// - Throws: `NewsstandError` when the token file cannot be read or written.
    public init(library: Library, options: ServeOptions, logger: Logger) throws {
        var token: String?
        var newToken: String?
        if !options.isLoopback {
            let (value, created) = try AccessToken.loadOrCreate(library.layout)
            token = value
            if created { newToken = value }
        }
        self.newToken = newToken
        self.options = options
        let policy = SecurityPolicy(listenHost: options.host, port: options.port, accessToken: token)
        let downloads = DownloadRunner(library: library, options: options.downloadOptions, logger: logger)
        state = ServerState(library: library, policy: policy, downloads: downloads, logger: logger)
    }

    /// Downloads the pages start from now on use `download` (a service's SIGHUP after its config changed).
    public func reconfigure(download: DownloadOptions) {
        state.downloads.reconfigure(download: download)
    }

    /// Whether requests need the access token (the server listens beyond loopback).
    public var needsToken: Bool { state.policy.accessToken != nil }

    /// The services to run: the HTTP server and the background downloads it starts.
    /// - Parameter onListening: Called with the bound port once the server accepts connections.
    public func services(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> [any Service] {
        let router = Router(context: ServeContext.self)
        router.add(middleware: SecurityMiddleware(policy: state.policy))
        PageRoutes.add(to: router, state: state)
        FileRoutes.add(to: router, state: state)
        FeedRoutes.add(to: router, state: state)
        APIRoutes.add(to: router, state: state)
        let policy = state.policy
        let shelf = state.shelf
        var logger = state.logger
        logger[metadataKey: "component"] = "serve"
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(options.host, port: options.port), serverName: "issues/\(NewsstandInfo.version)"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                policy.bound(port: port)
                // The shelf's view of the index is read now, not by the first visitor.
                Task.detached(priority: .utility) { _ = try? shelf.snapshot() }
                await onListening(port)
            },
            logger: logger)
        return [application, state.downloads]
    }
}
