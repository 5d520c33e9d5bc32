import ArgumentParser
import Foundation
import Newsstand

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List issues, newest date first.")

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Option(
        name: .long,
        help: ArgumentHelp("Only issues with this status: none, downloading, available, failed.", valueName: "status"))
    var status: Issue.Status?

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        if output.json {
            try await library.writeJSONList(status: status, to: FileHandle.standardOutput)
            return
        }
        let summaries = try await library.summaries(status: status)
        guard !summaries.isEmpty else {
            Terminal.error(
                status == nil
                    ? "no issues in \(library.rootURL.path)" : "no issues with status \(status?.rawValue ?? "")")
            return
        }
        IssueTable.write(summaries, root: library.rootURL.path)
    }
}

extension Issue.Status: ExpressibleByArgument {}
