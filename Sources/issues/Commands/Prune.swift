import ArgumentParser
import Foundation
import Newsstand

struct Prune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove issues by policy: keep the newest N, drop old ones, stay under a byte budget.",
        discussion: """
            The rules combine: an issue goes when any of them picks it. --keep N keeps the N newest issues \
            of each subscription (for subscribed issues) or publication (the issue's publication, else its \
            name without a trailing date or number). --older-than DAYS removes issues dated more than DAYS \
            days ago. --max-bytes SIZE then removes the oldest remaining issues until the library's issues \
            take at most SIZE on disk. A pinned issue, and one whose download or unpack is in flight (in \
            any process), is never removed. --dry-run lists exactly what a real run removes and the bytes \
            it frees, and changes nothing.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Option(
        name: .long, help: ArgumentHelp("Keep the N newest issues per publication or subscription.", valueName: "n"))
    var keep: Int?

    @Option(
        name: .customLong("older-than"),
        help: ArgumentHelp("Remove issues dated more than DAYS days ago.", valueName: "days"))
    var olderThan: Int?

    @Option(
        name: .customLong("max-bytes"),
        help: ArgumentHelp(
            "Remove the oldest issues until the library takes at most SIZE (500M, 16G).", valueName: "size"))
    var maxBytes: ByteSize?

    @Flag(name: .customLong("dry-run"), help: "Only list what would be removed; change nothing.")
    var dryRun = false

    func validate() throws {
        if keep == nil && olderThan == nil && maxBytes == nil {
            throw ValidationError("give at least one of --keep, --older-than and --max-bytes")
        }
        if let keep, keep < 0 { throw ValidationError("--keep must be 0 or more") }
        if let olderThan, olderThan < 0 { throw ValidationError("--older-than must be 0 or more") }
    }

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let policy = PrunePolicy(keep: keep, olderThanDays: olderThan, maxBytes: maxBytes?.bytes)
        let report = try await library.prune(policy, dryRun: dryRun)
        if output.json {
            Terminal.output(try ReportJSON.text(report))
        } else {
            Terminal.output(PruneOutput.text(report, budget: maxBytes?.bytes))
        }
    }
}

/// What `prune` prints.
enum PruneOutput {
    static func text(_ report: PruneReport, budget: Int64?) -> String {
        var lines: [String] = []
        let verb = report.dryRun ? "would remove" : "removed"
        for removal in report.removed {
            lines.append(
                "\(verb) \(removal.name.debugDescription) (\(removal.date), \(Format.bytes(removal.bytes)); "
                    + "\(removal.reasons.map(\.rawValue).joined(separator: ", ")))")
        }
        for spared in report.spared {
            let why = spared.protection == .pinned ? "pinned" : "a download or unpack is in flight"
            lines.append("kept \(spared.name.debugDescription) (\(spared.date)): \(why)")
        }
        let count = report.removed.count
        let issues = "\(count) issue\(count == 1 ? "" : "s")"
        let freed = "\(Format.bytes(report.bytesFreed)) (\(report.bytesFreed) bytes)"
        let after = Format.bytes(report.bytesAfter)
        lines.append(
            report.dryRun
                ? "\(issues) would be removed, \(freed) freed; the issues would then take \(after)"
                : "\(issues) removed, \(freed) freed; the issues now take \(after)")
        if report.overBudget, let budget {
            lines.append(
                "still over --max-bytes \(Format.bytes(budget)): the rest is pinned or in flight")
        }
        if report.dryRun { lines.append("dry run: nothing was removed") }
        return lines.joined(separator: "\n")
    }
}
