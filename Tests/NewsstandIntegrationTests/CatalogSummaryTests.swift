import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCatalog
@testable import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The summary `list` reads (`.catalog/summary.jsonl`): always the index's word, whatever a kill, a power cut or
/// an earlier version left.
@Suite(.timeLimit(.minutes(5))) struct CatalogSummaryTests {
    func catalog(_ root: URL, slack: Int = 8 << 20) throws -> Catalog {
        let catalog = Catalog(layout: LibraryLayout(root: root.path), durable: false, compactionSlack: slack)
        try catalog.prepare(create: true)
        return catalog
    }

    /// Issues with names that exercise the by-position parser: escapes, non-ASCII, a folder unlike the name,
    /// several on one day (sorted by name), pins, statuses.
    func issue(_ index: Int, round: Int = 0) throws -> Newsstand.Issue {
        let names = [
            "Plain \(index)", "Quote \"\(index)\"", "Back\\slash \(index)", "Ünïcode ✓ \(index)", "Tab\t\(index)",
        ]
        let name = names[index % names.count]
        let day = 1 + index % 3
        var issue = Newsstand.Issue(
            name: name, date: try #require(IssueDate(year: 2026, month: 11, day: day)),
            folderName: index % 5 == 0 || index % 5 == 3 ? name : "Folder \(index)")
        issue.assets = try (0..<(index % 3)).map { asset in
            var download = AssetDownload(
                id: "\(index)-\(asset)-\(round)",
                url: try #require(URL(string: "https://example.com/\(index)/\(asset)")))
            download.receivedBytes = Int64(index * 1000 + round)
            return download
        }
        issue.isPinned = index % 5 == 1
        return issue
    }

    func expectSame(_ catalog: Catalog, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let listed = Array(try catalog.listing())
        let indexed = Array(try catalog.listing(summary: false))
        #expect(listed == indexed, comment, sourceLocation: sourceLocation)
        // And both are what the index's own reader (another parser, a dictionary of keys) says.
        let entries = try catalog.openIndex().sortedEntries().map(\.summary)
        #expect(indexed == entries, comment, sourceLocation: sourceLocation)
        #expect(!listed.isEmpty, sourceLocation: sourceLocation)
        for status in [Newsstand.Issue.Status.none, .downloading, .available, .failed] {
            #expect(
                Array(try catalog.listing(status: status)) == indexed.filter { $0.status == status },
                sourceLocation: sourceLocation)
        }
    }

    /// How far into the index the summary reaches.
    func covered(_ catalog: Catalog) throws -> Int64 {
        let fd = open(catalog.layout.summary, O_RDONLY)
        defer { close(fd) }
        return Int64(try #require(CatalogSummary.state(of: fd)).covered)
    }

    @Test func theSummaryFollowsEveryChangeAndCompaction() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root, slack: 8 << 10)
            var sizes: Set<Int64> = []
            for round in 0..<40 {
                try catalog.write { changes in
                    for index in 0..<12 where (index + round) % 3 != 0 {
                        try changes.put(try issue(index, round: round))
                    }
                    if round % 7 == 3 { try changes.delete(named: try issue(round % 12).name) }
                }
                try expectSame(catalog, "round \(round)")
                sizes.insert(try #require(POSIX.fileSize(catalog.layout.summary)))
                #expect(try covered(catalog) == POSIX.fileSize(catalog.layout.index), "round \(round)")
            }
            // The summary was rewritten by compactions (it shrank at least once) and read every time.
            #expect(sizes.count > 10)
            let listing = try catalog.listing()
            let names = listing.map(\.name)
            // Newest first, then by name's bytes.
            for (a, b) in zip(listing, listing.dropFirst()) {
                #expect(
                    a.date > b.date
                        || (a.date == b.date && Array(a.name.utf8).lexicographicallyPrecedes(Array(b.name.utf8))))
            }
            #expect(Set(names).count == names.count)
            #expect(names.contains("Quote \"1\"") || names.contains("Quote \"6\"") || names.contains("Quote \"11\""))
        }
    }

    /// What each kind of leftover does: `list` still says what the index says, and the next change repairs it.
    @Test(arguments: ["missing", "behind", "torn", "otherIndex", "garbage", "ahead"])
    func aSummaryOutOfStepIsReadPastAndRepaired(_ damage: String) throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root)
            try catalog.write { changes in for index in 0..<20 { try changes.put(try issue(index)) } }
            let path = catalog.layout.summary
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            try catalog.write { changes in
                try changes.put(try issue(3, round: 1))
                try changes.delete(named: try issue(4).name)
            }
            let after = try Data(contentsOf: URL(fileURLWithPath: path))
            switch damage {
            case "missing": try FileManager.default.removeItem(atPath: path)
            // A writer killed between its index append and its summary append.
            case "behind": try before.write(to: URL(fileURLWithPath: path))
            case "torn": try (before + after.dropFirst(before.count).prefix(40)).write(to: URL(fileURLWithPath: path))
            case "otherIndex":
                var text = try #require(String(data: after, encoding: .utf8))
                let id = try #require(text.range(of: #"(?<="index":")[0-9a-f]{16}"#, options: .regularExpression))
                text.replaceSubrange(id, with: "0123456789abcdef")
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            case "garbage":
                try (before + Data(repeating: 0, count: 300) + Data([0x0A])).write(to: URL(fileURLWithPath: path))
            // Lines past the index's end (the index shortened under it): never read.
            default:
                let line = try #require(String(data: after, encoding: .utf8)?.split(separator: "\n").last)
                let far = line.replacingOccurrences(
                    of: #""end":[0-9]+"#, with: #""end":999999999"#, options: .regularExpression)
                try (after + Data((far + "\n").utf8)).write(to: URL(fileURLWithPath: path))
            }
            try expectSame(catalog, "after \(damage)")
            try catalog.write { changes in try changes.put(try issue(7, round: 2)) }
            try expectSame(catalog, "after the next change")
            // Repaired: the summary again reaches the index's end.
            #expect(try covered(catalog) == POSIX.fileSize(catalog.layout.index))
        }
    }

    /// A directory where the summary goes, or an index from before ids: changes still go through, `list` still
    /// says what the index says, and an index without an id gets one (with a summary) at the next change.
    @Test func aSummaryThatCannotBeWrittenOrAnIndexWithoutIdChangesNothing() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root)
            try catalog.write { changes in for index in 0..<10 { try changes.put(try issue(index)) } }
            // An index written before ids: its header without one (same length, so the lines stay where they are).
            let indexPath = catalog.layout.index
            var index = try Data(contentsOf: URL(fileURLWithPath: indexPath))
            let newline = try #require(index.firstIndex(of: 0x0A))
            var header = try #require(String(data: index[..<newline], encoding: .utf8))
            let id = try #require(header.range(of: #","id":"[0-9a-f]{16}""#, options: .regularExpression))
            header.replaceSubrange(id, with: String(repeating: " ", count: header[id].count))
            index.replaceSubrange(..<newline, with: Data(header.utf8))
            try index.write(to: URL(fileURLWithPath: indexPath))
            try expectSame(catalog, "an index without an id")
            try catalog.write { changes in try changes.put(try issue(11)) }
            try expectSame(catalog, "after the change that gives it one")
            #expect(try covered(catalog) == POSIX.fileSize(indexPath))
            // A directory in the summary's place.
            try FileManager.default.removeItem(atPath: catalog.layout.summary)
            try FileManager.default.createDirectory(atPath: catalog.layout.summary, withIntermediateDirectories: false)
            for round in 0..<3 {
                try catalog.write { changes in try changes.put(try issue(12 + round)) }
                try expectSame(catalog, "round \(round) with a directory in the summary's place")
            }
            try catalog.rebuildIndex()
            try expectSame(catalog, "after a rebuild of the index")
            #expect(FileManager.default.fileExists(atPath: catalog.layout.summary + "/"))
        }
    }

    /// A summary that parses but lies (no writer makes one): `verify` finds it and `--repair` rewrites it.
    @Test func verifyFindsASummaryThatDisagreesWithTheIndex() async throws {
        try await withTemporaryDirectory { root in
            var configuration = Library.Configuration()
            configuration.syncDownloads = false
            let library = try await Library.open(at: root, configuration: configuration)
            for index in 0..<6 {
                try await library.addIssue(
                    named: "Issue \(index)", date: try #require(IssueDate("2026-11-2\(index)")), assets: [])
            }
            #expect(try await library.verify(issues: nil, options: VerifyOptions()).problems.isEmpty)
            let path = LibraryLayout(root: root.path).summary
            let text = try String(contentsOfFile: path, encoding: .utf8)
            try text.replacingOccurrences(of: #""bytes":0"#, with: #""bytes":7"#).write(
                toFile: path, atomically: false, encoding: .utf8)
            let report = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(report.problems.map(\.path) == [path])
            #expect(report.problems.map(\.kind) == [.indexOutOfStep])
            let repaired = try await library.verify(issues: nil, options: VerifyOptions(repair: true))
            #expect(repaired.problems.allSatisfy { $0.repaired })
            #expect(try await library.verify(issues: nil, options: VerifyOptions()).problems.isEmpty)
            let summaries = try await library.summaries()
            #expect(summaries.allSatisfy { $0.bytes != 7 })
            try await library.shutdown()
        }
    }
}
