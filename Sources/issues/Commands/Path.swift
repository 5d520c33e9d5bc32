import ArgumentParser
import Foundation
import Newsstand

struct Path: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the absolute path of an issue's folder.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issue's name.", completion: IssueNameCompletion.kind)
    var name: String

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        Terminal.output(try await library.contentURL(forIssueNamed: name).path)
    }
}
