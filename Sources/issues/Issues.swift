import ArgumentParser
import Foundation
import Newsstand

#if canImport(Glibc)
    import Glibc
#endif

@main
struct Issues: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issues",
        abstract: "A Newsstand-style library of dated issues and their downloaded assets.",
        discussion: """
            The library lives in --library DIR, else $ISSUES_LIBRARY, else $XDG_DATA_HOME/issues \
            (~/.local/share/issues). Downloads survive crashes and resume with `issues resume`.
            """,
        version: NewsstandInfo.version,
        subcommands: [
            Add.self, AddAsset.self, Download.self, Resume.self, List.self, Show.self, Path.self, Open.self,
            Remove.self, Import.self, Export.self, Verify.self,
        ]
    )

    /// Like `AsyncParsableCommand.main()`, but a library failure becomes one `error:` line and exit 1;
    /// usage errors keep swift-argument-parser's text and exit 64.
    static func main() async {
        // A file-size limit must surface as EFBIG ("disk full") on the asset, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as NewsstandError {
            Terminal.error("error: \(error)")
            Foundation.exit(ExitCode.failure.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}
