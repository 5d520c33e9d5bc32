import ArgumentParser
import Foundation
import Newsstand

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Refresh subscriptions, add their new items as issues and download them.",
        discussion: """
            One-shot and idempotent, for cron or a systemd timer. Refreshes the named subscriptions \
            (paused ones too), or every active one. An unchanged feed (304, or the same body) writes \
            nothing. A subscription that fails is named on stderr and the others go on; the exit status \
            is then 1.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var run: DownloadRunOptions
    @OptionGroup var tls: TLSOptions

    @Argument(help: "Subscription names (all active ones if none).")
    var names: [String] = []

    @Flag(name: .long, help: "Add the new issues without downloading their assets.")
    var noDownload = false

    @Flag(name: .long, help: "Also add items seen before that never became issues (older than --initial chose).")
    var backfill = false

    func run() async throws {
        let (library, downloadOptions) = try await libraryOptions.openForDownloads(run, tls)
        var toDownload: [String] = []
        var failed = 0
        do {
            let reports = try await library.sync(
                names.isEmpty ? nil : names, backfill: backfill, queueingDownloads: !noDownload
            ) { reports in
                for await report in reports { SyncOutput.synced(report) }
            }
            if reports.isEmpty, names.isEmpty {
                Terminal.error("no active subscriptions in \(library.rootURL.path); add one with `issues subscribe URL`")
            }
            for report in reports {
                if report.failedError != nil { failed += 1 }
                if report.downloadsNewIssues { toDownload += report.keptIssues }
            }
        } catch {
            try? await library.shutdown()
            throw error
        }
        if !noDownload, !toDownload.isEmpty {
            let names = toDownload
            do {
                try await DownloadSession.run(library: library) { consume in
                    try await library.download(issues: names, options: downloadOptions, consume)
                }
            } catch let exit as ExitCode where exit == .failure && failed > 0 {
                throw exit
            }
        } else {
            try? await library.shutdown()
        }
        if failed > 0 { throw ExitCode.failure }
    }
}

/// The lines `subscribe` and `sync` print: results on stdout, failures as `error:` lines on stderr.
enum SyncOutput {
    static func subscribed(_ report: SyncReport, url: URL?) {
        Terminal.output("subscribed \(report.subscription.debugDescription)\(url.map { " to \($0.absoluteString)" } ?? "")")
        details(report)
    }

    static func synced(_ report: SyncReport) {
        let name = report.subscription.debugDescription
        if let error = report.failedError {
            Terminal.error("error: \(name): \(error.message)")
            return
        }
        if case .unchanged = report.outcome, report.movedTo == nil {
            Terminal.output("\(name): unchanged")
            return
        }
        let added = report.addedIssues.count
        Terminal.output("\(name): \(added) new issue\(added == 1 ? "" : "s")")
        details(report)
    }

    private static func details(_ report: SyncReport) {
        for note in report.notes { Terminal.output("  note: \(note)") }
        if let moved = report.movedTo { Terminal.output("  moved to \(moved.absoluteString)") }
        for name in report.addedIssues { Terminal.output("  added \(name.debugDescription)") }
        for name in report.updatedIssues { Terminal.output("  new asset URL for \(name.debugDescription)") }
        for name in report.extendedIssues { Terminal.output("  new file (transcript or chapters) for \(name.debugDescription)") }
        if report.rematchedItems > 0 {
            Terminal.output("  \(report.rematchedItems) item\(report.rematchedItems == 1 ? "" : "s") recognised under a changed id")
        }
        if report.seenOnly > 0 {
            Terminal.output("  \(report.seenOnly) older item\(report.seenOnly == 1 ? "" : "s") remembered as seen (`issues sync --backfill` adds them)")
        }
        for name in report.prunedIssues { Terminal.output("  pruned \(name.debugDescription)") }
    }
}

extension SyncReport {
    var failedError: NewsstandError? {
        if case .failed(let error) = outcome { return error }
        return nil
    }
}
