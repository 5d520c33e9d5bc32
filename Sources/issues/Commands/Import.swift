import ArgumentParser
import Foundation
import Newsstand

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add many issues at once from JSON.",
        discussion: """
            FILE (or - for standard input) holds a JSON array of issues, JSON Lines, or a catalog object \
            {"publication": …, "issues": […]}; each issue is {"name", "date", "assets": [{"url", "sha256"?, \
            "unpack"?, "headers"?: {"Name": "value"}}]}, the format `issues export` writes. Each issue is added or refused on its own; \
            one line per issue says which. Exits 1 when any issue was refused.
            """)

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: ArgumentHelp("The JSON file, or - for standard input.", valueName: "file"), completion: .file())
    var file: String

    @Flag(name: .long, help: "Print only the refused issues and the totals.")
    var quiet = false

    func run() async throws {
        let source = file == "-" ? "standard input" : file
        let data: Data
        do {
            data =
                file == "-"
                ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw NewsstandError(.invalidImport, "cannot read \(file): \(error.localizedDescription)")
        }
        let library = try await libraryOptions.open()
        let report = try await library.importIssues(from: data, source: source)
        var out = ""
        var refused = report.refused.makeIterator()
        var nextRefused = refused.next()
        var added = report.added.makeIterator()
        // Input order: refusals carry their index, and the added names fill the gaps between them.
        for index in 0..<(report.added.count + report.refused.count) {
            if let refusal = nextRefused, refusal.index == index {
                let name = refusal.name.map(\.debugDescription) ?? "issue #\(index + 1)"
                out += "refused \(name): \(refusal.reason)\n"
                nextRefused = refused.next()
            } else if let name = added.next(), !quiet {
                out += "added \(name.debugDescription)\n"
            }
            if out.utf8.count > 1 << 20 {
                Terminal.write(out, to: STDOUT_FILENO)
                out = ""
            }
        }
        out += "\(report.added.count) added, \(report.refused.count) refused\n"
        Terminal.write(out, to: STDOUT_FILENO)
        if !report.refused.isEmpty {
            throw NewsstandError(
                .invalidImport, "\(report.refused.count) of \(report.added.count + report.refused.count) issues in \(source) were refused")
        }
    }
}
