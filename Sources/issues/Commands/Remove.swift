import ArgumentParser
import Foundation
import Newsstand

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove an issue: cancel its downloads, delete its folder and partial files.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issue's name.", completion: IssueNameCompletion.kind)
    var name: String

    func run() async throws {
        let library = try await libraryOptions.open()
        try await library.removeIssue(named: name)
        Terminal.output("removed \(name.debugDescription)")
    }
}
