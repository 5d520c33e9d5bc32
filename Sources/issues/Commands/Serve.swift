import ArgumentParser
import Foundation
import Logging
import Newsstand
import NewsstandServer
import ServiceLifecycle
import UnixSignals

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the library in a browser, as a JSON API and as OPDS and RSS feeds.",
        discussion: """
            Listens on 127.0.0.1:\(ServeOptions.defaultPort) unless --listen says otherwise. On loopback no token is \
            needed; any other address needs the library's access token (made on first use, stored 0600 in the \
            library's .serve-token and shown once), sent as `Authorization: Bearer TOKEN` or through the login page. \
            SIGINT or SIGTERM stops the server gracefully (exit 0); downloads it started keep their partial files \
            for `issues resume`.
            """)

    @OptionGroup var libraryOptions: LibraryOptions

    @Option(name: .long, help: "The address and port to listen on (ADDR:PORT, [IPv6]:PORT).")
    var listen: String = "127.0.0.1:\(ServeOptions.defaultPort)"

    @Option(name: .long, help: "Downloads the server runs at once.")
    var jobs: Int = 4

    func validate() throws {
        do {
            _ = try ServeOptions(listen: listen)
        } catch {
            throw ValidationError("\(error)")
        }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() async throws {
        var options = try ServeOptions(listen: listen)
        options.downloadOptions.jobs = jobs
        let library = try await libraryOptions.open()
        let logger = Terminal.logger(verbosity: libraryOptions.verbose)
        let server = try IssuesServer(library: library, options: options, logger: logger)
        if let token = server.newToken {
            Terminal.error("access token (shown once; kept 0600 in the library's .serve-token): \(token)")
        }
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        let services = server.services { port in
            Terminal.error("serving \(library.rootURL.path) on http://\(host):\(port)/")
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        try await library.shutdown()
    }
}
