import ArgumentParser
import Foundation
import Logging
import Newsstand
import NewsstandServer
import NewsstandService
import ServiceLifecycle
import UnixSignals

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep the library current by itself, and serve it in a browser, as a JSON API and as OPDS and RSS feeds.",
        discussion: """
            The scheduler checks each subscription when its plan says (`issues schedule` shows it), downloads \
            new issues as their subscription asks and resumes downloads a stop interrupted. One service per \
            library. Under systemd (`issues service install`) it says READY=1 and pings the watchdog.

            The web server listens on 127.0.0.1:\(ServeOptions.defaultPort) unless --listen says otherwise \
            (--no-http: none). On loopback no token is needed; any other address needs the library's access \
            token (made on first use, stored 0600 in the library's .serve-token and shown once), sent as \
            `Authorization: Bearer TOKEN` or through the login page.

            SIGINT or SIGTERM checkpoints what is in flight and exits 0 (downloads keep their partial files for \
            the next start); SIGHUP re-reads the config files (proxies, trust, headers, rate, segments, the filing \
            template: for what starts from then on), the hooks and the subscriptions' plans.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var run: DownloadRunOptions
    @OptionGroup var tls: TLSOptions

    @Option(name: .long, help: "The address and port to listen on (ADDR:PORT, [IPv6]:PORT).")
    var listen: String = "127.0.0.1:\(ServeOptions.defaultPort)"

    @Flag(name: .customLong("no-http"), help: "Run the scheduler only, without the web server (a headless service).")
    var noHTTP = false

    @Option(name: .long, help: "How the service logs to stderr: text or json (one object a line).")
    var logFormat: ServiceLogHandler.Format = .text

    func validate() throws {
        do {
            _ = try ServeOptions(listen: listen)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        let stopSignals = StopSignals()
        let (library, downloadOptions) = try await libraryOptions.openForDownloads(run, tls)
        var server: IssuesServer?
        var options = try ServeOptions(listen: listen)
        if !noHTTP {
            options.downloadOptions = downloadOptions
            server = try IssuesServer(
                library: library, options: options, logger: Terminal.logger(verbosity: libraryOptions.verbose))
        }
        let (libraryOptions, run, tls, web) = (self.libraryOptions, self.run, self.tls, server)
        let resident = try await ResidentService.start(
            library: library, logFormat: logFormat, verbosity: libraryOptions.verbose, download: downloadOptions,
            waitingFor: noHTTP ? [] : ["http"], reread: { try libraryOptions.downloadSettings(run, tls) },
            onDownloadOptions: { web?.reconfigure(download: $0) })
        var services = resident.services
        if let server {
            if let token = server.newToken {
                Terminal.error("access token (shown once; kept 0600 in the library's .serve-token): \(token)")
            }
            let host = options.host.contains(":") ? "[\(options.host)]" : options.host
            services += server.services { port in
                Terminal.error("serving \(library.rootURL.path) on http://\(host):\(port)/")
                resident.readiness.ready("http")
            }
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                logger: resident.logger))
        stopSignals.forward(to: group)
        try await group.run()
        resident.readiness.stopping()
        resident.logger.info("stopped")
        try await library.shutdown()
        withExtendedLifetime(resident.lock) {}
    }
}

extension ServiceLogHandler.Format: ExpressibleByArgument {}
