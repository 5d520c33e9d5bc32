import ArgumentParser
import Foundation
import Newsstand

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write issues as JSON that `issues import` reads.",
        discussion: """
            Writes a JSON array, one issue per line, newest first: name, date, status and assets (url, \
            sha256, unpack, state, bytes). Importing it into an empty library gives the same issues. \
            Assets' request headers (--header of add-asset) are secrets and are left out unless \
            --include-headers is given; a note on stderr says how many assets had some.
            """)

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "Issues to export (all when none is named).", completion: IssueNameCompletion.kind)
    var names: [String] = []

    @Flag(name: .long, help: "Also write assets' request headers, in full (they may hold credentials).")
    var includeHeaders = false

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let report = try await library.exportIssues(
            named: names.isEmpty ? nil : names, to: FileHandle.standardOutput, includeHeaders: includeHeaders)
        if report.assetsWithHeadersLeftOut > 0 {
            Terminal.error(
                "note: the request headers of \(report.assetsWithHeadersLeftOut) asset(s) were left out; "
                    + "--include-headers writes them")
        }
    }
}
