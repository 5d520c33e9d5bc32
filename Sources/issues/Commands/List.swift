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
        let library = try await libraryOptions.open()
        let issues = await library.issues.filter { status == nil || $0.status == status }
        if output.json {
            try JSONOutput.print(issues.map { IssueReport($0, library: library) })
            return
        }
        guard !issues.isEmpty else {
            Terminal.error(
                status == nil
                    ? "no issues in \(library.rootURL.path)" : "no issues with status \(status?.rawValue ?? "")")
            return
        }
        Terminal.output(TableRenderer.issues(issues.map { IssueReport($0, library: library) }))
    }
}

extension Issue.Status: ExpressibleByArgument {}
