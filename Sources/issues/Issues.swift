import ArgumentParser
import Foundation
import Newsstand
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

@main
struct Issues: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issues",
        abstract: "A Newsstand-style library of dated issues and their downloaded assets.",
        // generate-manual's EXIT STATUS section says only "0 on success, >0 on error", and it has no
        // ENVIRONMENT section: both are spelled out here, so they reach `--help` and the man page alike.
        discussion: """
            The library lives in --library DIR, else $ISSUES_LIBRARY, else $XDG_DATA_HOME/issues \
            (~/.local/share/issues). Downloads survive crashes and resume with `issues resume`.

            Exit status: 0 on success; 1 when a command failed (an asset that could not be downloaded or \
            unpacked, an unknown issue, an unreadable library), after one line beginning `error:` on \
            stderr; 64 on a usage error (a bad option or value); 130 when a download was interrupted \
            (Ctrl-C or SIGTERM), with its partial files kept for `issues resume`.

            Environment: ISSUES_LIBRARY, the library folder when --library is not given. XDG_DATA_HOME, \
            whose issues folder is the library otherwise. http_proxy, https_proxy, all_proxy and no_proxy \
            (or their upper-case forms), the proxies to use and the hosts to reach directly. SSL_CERT_FILE \
            and SSL_CERT_DIR, certificate authorities to trust besides the system's. COLUMNS, the width of \
            the progress display, overriding the terminal's. TERM=dumb, or a locale that is not UTF-8, \
            for plain or ASCII progress.
            """,
        version: NewsstandInfo.version,
        subcommands: [
            Add.self, AddAsset.self, Download.self, Resume.self, List.self, Show.self, Path.self, Open.self,
            Remove.self, Import.self, Export.self, Verify.self, Pin.self, Unpin.self, Prune.self, Subscribe.self,
            Sync.self, Subscriptions.self, Unsubscribe.self, Configure.self, Pause.self, Unpause.self, Schedule.self,
            Events.self, Config.self, Mark.self, Serve.self, ServiceCommand.self, Covers.self, ContactSheetCommand.self,
            CoverWorkerCommand.self,
        ]
    )

    /// Like `AsyncParsableCommand.main()`, but a library failure becomes one `error:` line and exit 1;
    /// usage errors keep swift-argument-parser's text and exit 64.
    static func main() async {
        // A file-size limit must surface as EFBIG ("disk full") on the asset, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        // Two malloc arenas instead of up to eight a core: the transfers, the blocking pool and the event loops
        // each made one, and a download of 10,000 queued assets peaked at 72.0 MiB against 61.9 MiB with two
        // (MALLOC_ARENA_MAX=2 on the same binary). A thread gets its arena on its first contended allocation,
        // so this comes first; a MALLOC_ARENA_MAX in the environment is the user's and stays.
        // `covers` makes its covers on one thread, where a second arena only fragments: 1,000 mixed covers
        // peaked at 73.5 MiB with two, 67.9 MiB with one (same binary and library). glibc fixes the count the
        // first time a thread needs an arena, so it is chosen from the subcommand's name, before parsing.
        let oneThreaded: Set = [Covers._commandName, ContactSheetCommand._commandName, CoverWorkerCommand._commandName]
        if getenv("MALLOC_ARENA_MAX") == nil {
            POSIX.limitMallocArenas(oneThreaded.contains(CommandLine.arguments.dropFirst().first ?? "") ? 1 : 2)
        }
        // The cover worker skips the parser: it is started by this program with no options, and what the parser
        // touches of the binary stays resident in the process that makes covers.
        if CommandLine.arguments.dropFirst() == [CoverWorkerCommand._commandName] {
            do {
                try CoverWorkerCommand().run()
                // Every answer is written with write(2), nothing is buffered: no exit handler of the image
                // libraries needs to run (one that hangs would keep the command waiting).
                _exit(0)
            } catch {
                Terminal.error("error: the cover worker: \(error)")
                Foundation.exit(ExitCode.failure.rawValue)
            }
        }
        var failure: (any Error)?
        do {
            var command = try await asyncParseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            failure = error
        }
        // Whatever the outcome: the cover worker ended and reaped, and what the command changed (also before it
        // failed) delivered to the hooks.
        CoverWorkerClient.shared.stop()
        await LibraryOptions.waitForEventDelivery()
        LibraryOptions.closeCatalogs()
        if let error = failure as? NewsstandError {
            Terminal.error("error: \(error)")
            Foundation.exit(ExitCode.failure.rawValue)
        } else if let failure {
            exit(withError: failure)
        }
    }
}
