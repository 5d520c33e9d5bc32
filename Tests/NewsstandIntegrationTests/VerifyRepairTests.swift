import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// `verify` and `verify --repair` on each kind of damage, on libraries filled by real downloads from a
/// local server: the damage is reported (not clean), the repair fixes it (or, for orphans, lists it),
/// and a download afterwards brings the content back.
@Suite(.timeLimit(.minutes(5))) struct VerifyRepairTests {
    static let date = IssueDate(year: 2026, month: 11, day: 20)!
    static let pages: [FixtureEntry] = [
        .directory("pages"), .file("pages/1.txt", Array("one\n".utf8)), .file("pages/2.txt", Array("second\n".utf8)),
        .file("cover.jpg", patternBytes(count: 5_000)),
    ]
    static let plain = patternBytes(count: 20_000)

    func openLibrary(_ root: URL) async throws -> Library {
        var configuration = Library.Configuration()
        configuration.syncDownloads = false
        return try await Library.open(at: root, configuration: configuration)
    }

    /// A library with one issue holding an unpacked ZIP and a plain file with a checksum, downloaded.
    func withDownloadedLibrary(_ body: (Library, URL, Newsstand.Issue) async throws -> Void) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { root in
                let zipPath = root.path + "/fixture.zip"
                try ArchiveFixtures.write(Self.pages, format: .zip, to: zipPath)
                server.serve("/issue.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zipPath))))
                server.serve("/plain.pdf", bytes: Self.plain)
                let lib = root.appendingPathComponent("lib")
                let library = try await openLibrary(lib)
                try await library.addIssue(
                    named: "The Daily 2026-11-20", date: Self.date,
                    assets: [
                        AssetRequest(url: URL(string: server.url("/issue.zip"))!),
                        AssetRequest(url: URL(string: server.url("/plain.pdf"))!, sha256: sha256Hex(Self.plain)),
                    ])
                let summary = try await library.download()
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                let issue = try #require(try await library.issue(named: "The Daily 2026-11-20"))
                #expect(issue.status == .available)
                let clean = try await library.verify(issues: nil, options: VerifyOptions())
                #expect(clean.problems.isEmpty, "\(clean.problems)")
                #expect(clean.contentChecked == 1)
                try await body(library, lib, issue)
                try await library.shutdown()
            }
        }
    }

    func kinds(_ report: VerifyReport) -> [VerifyReport.Problem.Kind] { report.problems.map(\.kind) }

    /// Reports `expected`, repairs it, then a download restores the issue and verify is clean.
    func expectRepairedAndRefetched(
        _ library: Library, _ expected: VerifyReport.Problem.Kind, deep: Bool = false
    ) async throws {
        let found = try await library.verify(issues: nil, options: VerifyOptions(deep: deep))
        #expect(kinds(found) == [expected], "\(found.problems)")
        #expect(!found.isClean)
        let repaired = try await library.verify(issues: nil, options: VerifyOptions(repair: true, deep: deep))
        #expect(repaired.problems.allSatisfy { $0.repaired }, "\(repaired.problems)")
        #expect(repaired.isClean)
        #expect(try await library.issue(named: "The Daily 2026-11-20")?.status != .available)
        #expect(!(try await library.downloadingAssets()).isEmpty, "re-queued for resume too")
        let summary = try await library.resumeDownloads()
        #expect(summary.failed.isEmpty && !summary.finished.isEmpty, "\(summary)")
        #expect(try await library.issue(named: "The Daily 2026-11-20")?.status == .available)
        let after = try await library.verify(issues: nil, options: VerifyOptions(deep: true))
        #expect(after.problems.isEmpty, "\(after.problems)")
    }

    /// The whole catalog read on several threads (what `verify` does) is every record, whatever the thread
    /// count; a damaged record stops it naming the database and the issue, and `verify` with it.
    @Test func recordsReadOnSeveralThreadsAreAllAndADamagedRecordStopsThem() async throws {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root)
            for n in 1...60 {
                try await library.addIssue(
                    named: "Gazette \(n)", date: Self.date,
                    assets: [AssetRequest(url: URL(string: "https://cdn.example.com/\(n).pdf")!)])
            }
            let catalog = library.catalog
            let walked = Dictionary(uniqueKeysWithValues: try catalog.issues().map { (Catalog.key(for: $0.name), $0) })
            #expect(walked.count == 60)
            for threads in [1, 2, 3, 16] {
                #expect(try catalog.allRecords(threads: threads) == walked, "\(threads) threads")
            }
            let key = Catalog.key(for: "Gazette 60")
            try SQLiteShell.run(library.layout.database, "UPDATE issues SET record = '{\"key\": not json' WHERE key = '\(key)'")
            for threads in [1, 2] {
                #expect(throws: NewsstandError.self, "\(threads) threads") {
                    _ = try catalog.allRecords(threads: threads)
                }
            }
            do {
                _ = try await library.verify(issues: nil, options: VerifyOptions())
                Issue.record("verify went past a damaged record")
            } catch let error as NewsstandError {
                #expect(error.message.contains(library.layout.database) && error.message.contains(key), "\(error.message)")
            }
            try await library.shutdown()
        }
    }

    @Test func aFileMissingFromAnUnpackedArchiveIsRefetched() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let folder = library.contentURL(for: issue).path
            try FileManager.default.removeItem(atPath: folder + "/pages/2.txt")
            try await expectRepairedAndRefetched(library, .missingContent)
            #expect(try String(contentsOfFile: folder + "/pages/2.txt", encoding: .utf8) == "second\n")
        }
    }

    @Test func anUnpackedFileThatChangedSizeIsRefetched() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let folder = library.contentURL(for: issue).path
            try Data("changed by hand\n".utf8).write(to: URL(fileURLWithPath: folder + "/pages/1.txt"))
            try await expectRepairedAndRefetched(library, .changedContent)
            #expect(try String(contentsOfFile: folder + "/pages/1.txt", encoding: .utf8) == "one\n")
        }
    }

    @Test func aPlainFileWithTheSameSizeButOtherBytesIsFoundByTheDeepCheck() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let path = library.contentURL(for: issue).path + "/plain.pdf"
            try Data(count: Self.plain.count).write(to: URL(fileURLWithPath: path))
            let shallow = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(shallow.problems.isEmpty, "the sizes still match")
            try await expectRepairedAndRefetched(library, .changedContent, deep: true)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == Self.plain, "the new copy took its name")
        }
    }

    @Test func aMissingPlainFileAndAMissingFolderAreRefetched() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let folder = library.contentURL(for: issue).path
            try FileManager.default.removeItem(atPath: folder + "/plain.pdf")
            try await expectRepairedAndRefetched(library, .missingContent)
            try FileManager.default.removeItem(atPath: folder)
            try await expectRepairedAndRefetched(library, .missingContent)
        }
    }

    @Test func orphansAreListedAndOnlyRemovedWhenAsked() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let folder = library.contentURL(for: issue).path
            try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
            try FileManager.default.createDirectory(atPath: folder + "/pages/extra", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: lib.path + "/Stray folder", withIntermediateDirectories: true)
            let found = try await library.verify(issues: nil, options: VerifyOptions(repair: true))
            #expect(
                Set(found.problems.map(\.path)) == [
                    folder + "/notes.txt", folder + "/pages/extra", lib.path + "/Stray folder",
                ])
            #expect(kinds(found).allSatisfy { $0 == .orphan } && !found.isClean)
            #expect(FileManager.default.fileExists(atPath: folder + "/notes.txt"), "a repair never deletes them")
            // Limited to the issue: the folder at the top is the library's business, still reported.
            let named = try await library.verify(issues: ["The Daily 2026-11-20"], options: VerifyOptions())
            #expect(named.problems.count == 3)
            await #expect(throws: NewsstandError.self) {
                try await library.verify(issues: ["Nope"], options: VerifyOptions())
            }
            let removed = try await library.verify(issues: nil, options: VerifyOptions(removeOrphans: true))
            #expect(removed.isClean && removed.problems.count == 3)
            #expect(!FileManager.default.fileExists(atPath: folder + "/notes.txt"))
            #expect(!FileManager.default.fileExists(atPath: lib.path + "/Stray folder"))
            #expect(FileManager.default.fileExists(atPath: folder + "/pages/1.txt"))
            #expect(try await library.verify(issues: nil, options: VerifyOptions()).problems.isEmpty)
        }
    }

    @Test func theLibrarysOwnStaleFilesAreDeleted() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let layout = library.layout
            let stale = [
                layout.partialFile("00000000deadbeef"), layout.completedFile("00000000deadbeef"),
                layout.resumeRecord("00000000deadbeef"), layout.legacyAssetLock("00000000deadbeef"),
                layout.contentRecord("00000000deadbeef"), layout.issueLock("Gone Weekly"),
            ]
            for path in stale { try Data("x".utf8).write(to: URL(fileURLWithPath: path)) }
            try FileManager.default.createDirectory(
                atPath: layout.stagingFolder("00000000cafef00d") + "/half", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: layout.trash + "/Old-1", withIntermediateDirectories: true)
            // Held by a download in flight: left alone.
            let held = try #require(try AssetLock.try("00000000feedface", layout: layout))
            try Data("partial".utf8).write(to: URL(fileURLWithPath: layout.partialFile("00000000feedface")))
            let found = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(kinds(found).allSatisfy { $0 == .staleFile } && found.problems.count == 8, "\(found.problems)")
            let repaired = try await library.verify(issues: nil, options: VerifyOptions(repair: true))
            #expect(repaired.isClean)
            for path in stale + [layout.stagingFolder("00000000cafef00d"), layout.trash + "/Old-1"] {
                #expect(!FileManager.default.fileExists(atPath: path), "\(path)")
            }
            #expect(FileManager.default.fileExists(atPath: layout.partialFile("00000000feedface")))
            withExtendedLifetime(held) {}
        }
    }

    @Test func aDanglingSavedDownloadAndAnIndexOutOfStepAreRepaired() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let layout = library.layout
            try SQLiteShell.run(
                layout.database,
                "INSERT INTO pending (asset_id, issue_key) VALUES ('00000000deadbeef', '\(String(repeating: "0", count: 32))');"
                    + "UPDATE issues SET bytes = 1")
            let found = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(Set(kinds(found)) == [.stalePendingDownload, .indexOutOfStep], "\(found.problems)")
            let repaired = try await library.verify(issues: nil, options: VerifyOptions(repair: true))
            #expect(repaired.isClean)
            #expect(try await library.verify(issues: nil, options: VerifyOptions()).problems.isEmpty)
            #expect(try await library.summaries().map(\.name) == ["The Daily 2026-11-20"])
        }
    }

    @Test func aDamagedContentRecordIsReportedAndDeleted() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            let records = try FileManager.default.contentsOfDirectory(atPath: library.layout.contentRecords)
            let path = library.layout.contentRecords + "/" + (try #require(records.first))
            try Data("{\"asset\": ".utf8).write(to: URL(fileURLWithPath: path))
            let found = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(kinds(found) == [.staleFile] && found.problems.first?.path == path, "\(found.problems)")
            #expect(try await library.verify(issues: nil, options: VerifyOptions(repair: true)).isClean)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try await library.verify(issues: nil, options: VerifyOptions()).problems.isEmpty)
        }
    }

    @Test func removingAnUnpackedIssueLeavesNothingForVerify() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            try await library.removeIssue(named: issue.name)
            let report = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(report.problems.isEmpty, "\(report.problems)")
        }
    }

    @Test func anInterruptedRemovalIsFinishedByTheRepair() async throws {
        try await withDownloadedLibrary { library, lib, issue in
            _ = try await runBlocking { [catalog = library.catalog] in
                try catalog.write { try $0.update(named: issue.name) { $0.isBeingRemoved = true } }
            }
            let found = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(kinds(found) == [.interruptedRemoval])
            let repaired = try await library.verify(issues: nil, options: VerifyOptions(repair: true))
            #expect(repaired.isClean, "\(repaired.problems)")
            #expect(try await library.summaries().isEmpty)
            #expect(!FileManager.default.fileExists(atPath: library.contentURL(for: issue).path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: library.layout.contentRecords).isEmpty)
            #expect(try await library.verify(issues: nil, options: VerifyOptions()).problems.isEmpty)
        }
    }
}
