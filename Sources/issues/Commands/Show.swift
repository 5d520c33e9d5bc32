import ArgumentParser
import Foundation
import Newsstand

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one issue and each asset's state.")

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Argument(help: "The issue's name.")
    var name: String

    func run() async throws {
        let library = try await libraryOptions.open()
        guard let issue = await library.issue(named: name) else {
            throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(library.rootURL.path)")
        }
        let report = IssueReport(issue, library: library)
        if output.json {
            try JSONOutput.print(report)
        } else {
            Terminal.output(TableRenderer.issue(report))
        }
    }
}
