import Foundation
import Logging
import Newsstand
import ServiceLifecycle
import Synchronization

/// The downloads and syncs the server starts on request, each a task of its own that outlives the request.
/// As a `Service` in the server's group it cancels them on shutdown (their partial files stay for
/// `issues resume`).
final class DownloadRunner: Service, Sendable {
    private let library: Library
    /// Replaced by ``reconfigure(download:)`` (a service's SIGHUP): downloads started later use the new one.
    private let options: Mutex<DownloadOptions>
    private let logger: Logger
    private let tasks = Mutex<[UUID: Task<Void, Never>]>([:])

    init(library: Library, options: DownloadOptions, logger: Logger) {
        self.library = library
        self.options = Mutex(options)
        self.logger = logger
    }

    /// Downloads the named issues' missing assets in the background.
    func download(_ names: [String]) {
        guard !names.isEmpty else { return }
        let library = self.library
        let options = self.options.withLock { $0 }
        let logger = self.logger
        start {
            do {
                try await library.download(issues: names, options: options)
            } catch {
                logger.warning("download failed", metadata: ["issues": "\(names)", "error": "\(error)"])
            }
        }
    }

    func reconfigure(download: DownloadOptions) {
        options.withLock { $0 = download }
    }

    /// Runs `work` in the background; it is cancelled when the server stops.
    func start(_ work: @escaping @Sendable () async -> Void) {
        let id = UUID()
        let task = Task { [weak self] in
            await work()
            _ = self?.tasks.withLock { $0.removeValue(forKey: id) }
        }
        tasks.withLock { $0[id] = task }
    }

    /// Waits for the service group's shutdown, then stops what is still running.
    func run() async throws {
        try? await gracefulShutdown()
        let running = tasks.withLock { Array($0.values) }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}
