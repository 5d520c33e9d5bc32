import ArgumentParser
import Foundation
import Newsstand

struct Pin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pin issues, so that prune never removes them.",
        discussion: "Like NewsstandKit's currentlyReadingIssue, for as many issues as you like. `unpin` undoes it.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issues' names.", completion: IssueNameCompletion.kind)
    var names: [String]

    func validate() throws {
        if names.isEmpty { throw ValidationError("name at least one issue to pin") }
    }

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        for issue in try await library.pin(issuesNamed: names) {
            Terminal.output("pinned \(issue.name.debugDescription)")
        }
    }
}

struct Unpin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unpin issues, so that prune may remove them again.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issues' names.", completion: IssueNameCompletion.kind)
    var names: [String]

    func validate() throws {
        if names.isEmpty { throw ValidationError("name at least one issue to unpin") }
    }

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        for issue in try await library.unpin(issuesNamed: names) {
            Terminal.output("unpinned \(issue.name.debugDescription)")
        }
    }
}
