import ArgumentParser
import Foundation
import Newsstand

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write issues as JSON that `issues import` reads.",
        discussion: """
            Writes a JSON array, one issue per line, newest first: name, date, status and assets (url, \
            sha256, unpack, state, bytes). Importing it into an empty library gives the same issues.
            """)

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "Issues to export (all when none is named).", completion: IssueNameCompletion.kind)
    var names: [String] = []

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        try await library.exportIssues(named: names.isEmpty ? nil : names, to: FileHandle.standardOutput)
    }
}
