import ArgumentParser
import Foundation
import Newsstand

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the catalog against itself and the disk; --repair fixes what the library owns.",
        discussion: """
            Reports interrupted changes, an index out of step with the issue records, saved downloads and \
            folder claims that point nowhere, temporary files left by killed processes, missing content \
            folders, interrupted removals, and folders no issue owns. Exits 1 when anything is left wrong. \
            --repair re-derives or rebuilds the index from the records, drops stale entries and \
            temporaries, and recreates missing folders; it never deletes a file it does not own.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Fix what can be fixed.")
    var repair = false

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let report = try await library.verify(repair: repair)
        if output.json {
            var problems: [[String: Any]] = []
            for problem in report.problems {
                problems.append([
                    "kind": problem.kind.rawValue, "path": problem.path, "detail": problem.detail,
                    "repaired": problem.repaired,
                ])
            }
            let object: [String: Any] = [
                "issuesChecked": report.issuesChecked, "clean": report.isClean, "problems": problems,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            Terminal.output(String(decoding: data, as: UTF8.self))
        } else {
            var lines: [String] = []
            for problem in report.problems {
                lines.append("\(problem.repaired ? "repaired" : "problem "): \(problem.kind.rawValue): \(problem.detail) (\(problem.path))")
            }
            let left = report.problems.filter { !$0.repaired }.count
            lines.append(
                "\(report.issuesChecked) issue(s) checked, \(report.problems.count) problem(s) found"
                    + (repair ? ", \(report.problems.count - left) repaired" : ""))
            Terminal.output(lines.joined(separator: "\n"))
        }
        if !report.isClean {
            throw NewsstandError(
                .verifyFailed,
                "\(report.problems.filter { !$0.repaired }.count) problem(s) in \(library.rootURL.path)"
                    + (repair ? " could not be repaired" : "; run `issues verify --repair`"))
        }
    }
}
