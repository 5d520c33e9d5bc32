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

    @Option(name: .long, help: ArgumentHelp("Only issues that came from this subscription.", valueName: "name"))
    var subscription: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Only issues of this publication (as `show` names it; any case).", valueName: "name"))
    var publication: String?

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let filter = try await library.issueFilter(status: status, subscription: subscription, publication: publication)
        if output.json {
            try await library.writeJSONList(filter, to: FileHandle.standardOutput)
            return
        }
        let listing = try await library.listing(filter)
        guard !listing.isEmpty else {
            Terminal.error(emptyMessage(root: library.rootURL.path))
            return
        }
        IssueTable.write(listing, root: library.rootURL.path)
    }

    /// "no issues …" naming each filter given, so an empty answer says what was asked.
    private func emptyMessage(root: String) -> String {
        var conditions: [String] = []
        if let status { conditions.append("with status \(status.rawValue)") }
        if let subscription { conditions.append("from subscription \(subscription.debugDescription)") }
        if let publication { conditions.append("of publication \(publication.debugDescription)") }
        return conditions.isEmpty ? "no issues in \(root)" : "no issues " + conditions.joined(separator: " ")
    }
}

extension Issue.Status: ExpressibleByArgument {}
