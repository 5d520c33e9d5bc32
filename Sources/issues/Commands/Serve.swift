import ArgumentParser
import Foundation
import Logging
import Newsstand
import NewsstandService
import ServiceLifecycle
import UnixSignals

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep the library current by itself (the scheduler), as a service.",
        discussion: """
            Checks each subscription when its plan says (`issues schedule` shows it), downloads new issues \
            as their subscription asks and resumes downloads a stop interrupted. One service per library. \
            Under systemd (`issues service install`) it says READY=1 and pings the watchdog. SIGTERM or \
            SIGINT checkpoints what is in flight and exits 0; SIGHUP re-reads the hooks and the plans.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var run: DownloadRunOptions
    @OptionGroup var tls: TLSOptions

    @Flag(name: .customLong("no-http"), help: "Run the scheduler only, without the web server.")
    var noHTTP = false

    @Option(name: .long, help: "How the service logs to stderr: text or json (one object a line).")
    var logFormat: ServiceLogHandler.Format = .text

    func run() async throws {
        guard noHTTP else {
            throw NewsstandError(.invalidConfiguration, "the web server is not built into this issues; use --no-http")
        }
        let (library, downloadOptions) = try await libraryOptions.openForDownloads(run, tls)
        let resident = try await ResidentService.start(
            library: library, logFormat: logFormat, verbosity: libraryOptions.verbose, download: downloadOptions,
            waitingFor: [])
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: resident.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: resident.logger))
        try await group.run()
        resident.readiness.stopping()
        resident.logger.info("stopped")
        try await library.shutdown()
        withExtendedLifetime(resident.lock) {}
    }
}

extension ServiceLogHandler.Format: ExpressibleByArgument {}
