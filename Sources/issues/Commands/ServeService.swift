import Foundation
import Logging
import Newsstand
import NewsstandService
import ServiceLifecycle

/// The resident part of `issues serve`, with or without its web server: the library's service lock, the
/// scheduler, systemd's notify protocol and watchdog, SIGHUP reloads, and the log.
struct ResidentService {
    let lock: ServiceLock
    let scheduler: Scheduler
    let readiness: Readiness
    let services: [any Service]
    let logger: Logger

    /// - Parameters:
    ///   - parts: What must be up before `READY=1` besides the scheduler (`http` with the web server).
    ///   - download: How the scheduler downloads new issues (each job one asset at a time, under the
    ///     per-host rule).
    ///   - reread: The configuration and download options read again from the config files (SIGHUP).
    ///   - onDownloadOptions: Hands reread download options to the web server's downloads.
    static func start(
        library: Library, logFormat: ServiceLogHandler.Format, verbosity: Int, download: DownloadOptions,
        waitingFor parts: Set<String>,
        reread: @escaping @Sendable () throws -> (Library.Configuration, DownloadOptions),
        onDownloadOptions: @escaping @Sendable (DownloadOptions) -> Void
    ) async throws -> ResidentService {
        let lock = try await ServiceLock.acquire(for: library)
        var logger = Logger(label: "issues") { _ in ServiceLogHandler(format: logFormat) }
        logger.logLevel = verbosity >= 2 ? .debug : .info
        let notifier = SystemdNotifier()
        let readiness = Readiness(notifier: notifier, parts: parts.union(["scheduler"]))
        var options = Scheduler.Options()
        options.download = download
        options.download.jobs = 1
        let log = logger
        let scheduler = Scheduler(library: library, options: options) { event in
            let (level, message) = event.logLine
            log.log(level: level, "\(message)")
        }
        let services: [any Service] = [
            SchedulerService(scheduler: scheduler) {
                log.info("scheduler started on \(library.rootURL.path)")
                readiness.ready("scheduler")
            },
            WatchdogService(notifier: notifier, scheduler: scheduler),
            EventWatchService(library: library, scheduler: scheduler),
            ReloadService(scheduler: scheduler) {
                log.info("SIGHUP: reading the config file, the hooks and the subscriptions' plans again")
                // A bad file keeps every setting as it was: a typo must not stop a running service.
                do {
                    let (configuration, download) = try reread()
                    await library.reconfigure(configuration)
                    await scheduler.reconfigure(download: download)
                    onDownloadOptions(download)
                } catch {
                    log.error("the config file was not reloaded, the settings stay as they were: \(error)")
                }
                do {
                    try await library.reloadHooks()
                } catch {
                    log.error("the hooks were not reloaded: \(error)")
                }
            },
        ]
        return ResidentService(lock: lock, scheduler: scheduler, readiness: readiness, services: services, logger: logger)
    }
}
