import ArgumentParser
import Dispatch
import Foundation
import Newsstand
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one `download` or `resume`: progress on stderr, Ctrl-C handling, the summary on stdout, and the
/// exit status (1 if any asset failed, 130 when interrupted).
enum DownloadSession {
    /// Reads a run's events; passed to the library's `download(issues:options:_:)` or `resumeDownloads`.
    typealias Consumer = @Sendable (AsyncStream<DownloadEvent>) async -> Void

    /// - Parameter body: Starts the run with the consumer it is given, e.g.
    ///   `{ consume in try await library.download(issues: names, options: options, consume) }`.
    static func run(
        library: Library, _ body: @escaping @Sendable (_ consume: @escaping Consumer) async throws -> DownloadSummary
    ) async throws {
        let reporter = ProgressReporter()
        let started = ContinuousClock.now
        // Ctrl-C cancels this task: the library then stops the run and still returns its summary.
        let task = Task {
            try await body { events in
                for await event in events { reporter.handle(event) }
            }
        }

        // First Ctrl-C: cancel, keep partial files, exit after the downloads wind down. Second: leave now.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let interrupts = InterruptCounter()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if interrupts.increment() > 1 {
                    reporter.finish()  // no half-drawn bars left behind
                    _exit(130)
                }
                task.cancel()
            }
            source.resume()
            sources.append(source)
        }
        defer {
            for source in sources { source.cancel() }
        }

        let summary: DownloadSummary
        do {
            summary = try await task.value
        } catch {
            reporter.finish()
            try? await library.shutdown()
            throw error
        }
        reporter.finish()
        try? await library.shutdown()

        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var parts = ["\(summary.finished.count) done"]
        if !summary.failed.isEmpty { parts.append("\(summary.failed.count) failed") }
        if !summary.skipped.isEmpty { parts.append("\(summary.skipped.count) skipped (busy in another process)") }
        if !summary.interrupted.isEmpty { parts.append("\(summary.interrupted.count) interrupted") }
        if summary.finished.isEmpty && summary.failed.isEmpty && summary.skipped.isEmpty && summary.interrupted.isEmpty
        {
            Terminal.output("nothing to download")
        } else {
            // The library counts the bytes of assets that finished or failed; those of interrupted transfers
            // come from their progress events and the partial files.
            let interrupted = reporter.bytesFetched(assetIDs: summary.interrupted) { library.bytesOnDisk(assetID: $0) }
            Terminal.output(
                "\(parts.joined(separator: ", ")); \(Format.bytes(summary.bytesReceived + interrupted)) fetched in "
                    + String(format: "%.1f s", seconds))
        }
        if interrupts.value > 0 || !summary.interrupted.isEmpty {
            Terminal.error("interrupted: partial files are kept; run `issues resume` to continue")
            throw ExitCode(130)
        }
        // Each failure already has its one `error:` line, printed when it happened.
        if !summary.failed.isEmpty { throw ExitCode.failure }
    }
}

/// Counts signals; shared between the signal handler and the command.
private final class InterruptCounter: Sendable {
    private let count = Mutex(0)
    func increment() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
    var value: Int { count.withLock { $0 } }
}
