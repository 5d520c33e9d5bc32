import ArgumentParser
import Foundation
import Newsstand

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the catalog and the issues' content against the disk; --repair fixes what the library owns.",
        discussion: """
            Reports interrupted changes and removals, an index out of step with the issue records, saved \
            downloads and folder claims that point nowhere, content missing from issues (a folder, or \
            files an asset placed), files that changed size (and, with --deep, checksum), partial, staging \
            and lock files no download uses, temporary files left by killed processes, and files and \
            folders no issue owns. Exits 1 when anything is left wrong. --repair re-derives or rebuilds \
            the index, drops stale entries, deletes the library's own stale files, finishes interrupted \
            removals and re-queues assets whose content is gone or changed (`issues download` or \
            `issues resume` fetches them again); it never deletes a file it does not own: orphans are \
            listed, and deleted only with --remove-orphans. Issues with a download in flight are skipped. Each \
            available issue's cover is checked (every file there and decoding); --repair makes it again.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Argument(help: "Only check the content of these issues (the catalog itself is always checked).")
    var names: [String] = []

    @Flag(name: .long, help: "Fix what can be fixed.")
    var repair = false

    @Flag(name: .customLong("remove-orphans"), help: "Delete files and folders that no issue owns.")
    var removeOrphans = false

    @Flag(name: .long, help: "Also hash every placed file whose SHA-256 is known (reads them all).")
    var deep = false

    func run() async throws {
        // A lost or damaged database makes opening refuse the library: rebuilt from the issue.json manifests first.
        let rebuilt = repair ? try await Library.rebuildDamagedCatalog(at: libraryOptions.resolvedURL()) : nil
        let library = try await libraryOptions.open(create: false)
        var report = try await library.verify(
            issues: names.isEmpty ? nil : names,
            options: VerifyOptions(repair: repair, removeOrphans: removeOrphans, deep: deep))
        // Covers are checked here, where the image libraries are (NewsstandCovers), not in the library's verify.
        report.problems += try await library.verifyCovers(
            issues: names.isEmpty ? nil : names, repair: repair, maker: CoverWorkerClient.shared)
        if let rebuilt {
            // Repaired before the library was opened (it refuses to open so): reported first, as found.
            report.problems.insert(
                VerifyReport.Problem(kind: .damagedCatalog, path: library.rootURL.path, detail: rebuilt, repaired: true), at: 0)
        }
        if output.json {
            Terminal.output(try ReportJSON.text(report))
        } else {
            var lines: [String] = []
            for problem in report.problems {
                lines.append("\(problem.repaired ? "repaired" : "problem "): \(problem.kind.rawValue): \(problem.detail) (\(problem.path))")
            }
            for name in report.skippedInFlight {
                lines.append("skipped:  \(name.debugDescription): a download or unpack is in flight")
            }
            let left = report.problems.filter { !$0.repaired }.count
            lines.append(
                "\(report.issuesChecked) issue(s) checked (\(report.contentChecked) with content on disk), "
                    + "\(report.problems.count) problem(s) found"
                    + (repair || removeOrphans ? ", \(report.problems.count - left) repaired" : ""))
            Terminal.output(lines.joined(separator: "\n"))
        }
        if !report.isClean {
            let left = report.problems.filter { !$0.repaired }
            let onlyOrphans = left.allSatisfy { $0.kind == .orphan }
            throw NewsstandError(
                .verifyFailed,
                "\(left.count) problem(s) in \(library.rootURL.path)"
                    + (onlyOrphans
                        ? ": files no issue owns; move them away or run `issues verify --remove-orphans`"
                        : repair ? " could not be repaired" : "; run `issues verify --repair`"))
        }
    }
}
