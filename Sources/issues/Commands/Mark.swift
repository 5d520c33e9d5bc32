import ArgumentParser
import Foundation
import Newsstand

struct Mark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mark issues read, or new again (the shelf's \"new\" badge).",
        discussion: "An issue is new until it is opened (`issues open`, or in the browser of `issues serve`).")

    @OptionGroup var libraryOptions: LibraryOptions

    @Flag(name: .customLong("read"), help: "Mark the issues read (the default).")
    var read = false

    @Flag(name: .customLong("unread"), help: "Mark the issues new again.")
    var unread = false

    @Argument(help: "The issues' names.", completion: IssueNameCompletion.kind)
    var names: [String]

    func validate() throws {
        if names.isEmpty { throw ValidationError("name at least one issue to mark") }
        if read && unread { throw ValidationError("--read and --unread contradict each other") }
    }

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        try await library.setRead(!unread, issuesNamed: names)
        for name in names {
            Terminal.output("marked \(name.debugDescription) \(unread ? "new" : "read")")
        }
    }
}
