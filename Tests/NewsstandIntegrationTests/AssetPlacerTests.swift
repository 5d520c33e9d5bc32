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

/// The placing step alone: no engine, no run, no actor. Each test puts a finished file where a download
/// leaves it (`.downloads/<id>.done`) and asks the placer to make it content.
@Suite(.timeLimit(.minutes(2))) struct AssetPlacerTests {
    /// A library with one issue of one asset, and a placer over its folder.
    func prepare(_ root: URL) async throws -> (AssetPlacer, AssetPlacer.Target, AssetDownload, LibraryLayout) {
        let library = try await Library.open(at: root)
        let url = try #require(URL(string: "http://127.0.0.1:9/files/report.pdf"))
        let issue = try await library.addIssue(
            named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!, assets: [AssetRequest(url: url)])
        let asset = try #require(issue.assets.first)
        let layout = library.layout
        try POSIX.makeDirectory(layout.downloads)
        try POSIX.makeDirectory(layout.staging)
        let placer = AssetPlacer(layout: layout, catalog: library.catalog, unpackLimits: .default)
        let target = AssetPlacer.Target(assetID: asset.id, issueName: issue.name, folderName: issue.folderName)
        return (placer, target, asset, layout)
    }

    func finishedFile(_ bytes: [UInt8], _ asset: AssetDownload, _ layout: LibraryLayout) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: layout.completedFile(asset.id)))
    }

    @Test func placesUnderItsNameAndNeverReplacesAFileAlreadyThere() async throws {
        try await withTemporaryDirectory { root in
            let (placer, target, asset, layout) = try await prepare(root)
            let folder = layout.contentFolder(target.folderName)
            try POSIX.makeDirectory(folder)
            try Data("the user's own".utf8).write(to: URL(fileURLWithPath: "\(folder)/report.pdf"))
            try finishedFile(Array("fresh".utf8), asset, layout)

            let name = try placer.placeFile(of: asset, into: target, record: nil)

            #expect(name == "report (2).pdf")
            #expect(try String(contentsOfFile: "\(folder)/report.pdf", encoding: .utf8) == "the user's own")
            #expect(try String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8) == "fresh")
            #expect(!POSIX.exists(layout.completedFile(asset.id)))
            // The name went into the resume record before the move, so a crash here is recognised.
            #expect(ResumeRecord.load(layout.resumeRecord(asset.id))?.placedAs == name)
            #expect(placer.alreadyPlaced(ResumeRecord.load(layout.resumeRecord(asset.id)), id: asset.id, folder: target.folderName))
        }
    }

    /// A crash between link(2) and unlink(2) leaves one inode under both names: placing again finishes the
    /// move under the same name instead of making a second copy.
    @Test func finishesAMoveACrashCutShort() async throws {
        try await withTemporaryDirectory { root in
            let (placer, target, asset, layout) = try await prepare(root)
            let folder = layout.contentFolder(target.folderName)
            try POSIX.makeDirectory(folder)
            try finishedFile(Array("bytes".utf8), asset, layout)
            #expect(link(layout.completedFile(asset.id), "\(folder)/report.pdf") == 0)

            let name = try placer.placeFile(of: asset, into: target, record: nil)

            #expect(name == "report.pdf")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["report.pdf"])
            #expect(!POSIX.exists(layout.completedFile(asset.id)))
        }
    }

    @Test func unpacksAnArchiveAndRecordsWhatItPlaced() async throws {
        try await withTemporaryDirectory { root in
            let (placer, target, asset, layout) = try await prepare(root)
            try ArchiveFixtures.write(
                [.directory("pages"), .file("pages/1.txt", Array("one".utf8)), .file("cover.txt", Array("c".utf8))],
                format: .zip, to: layout.completedFile(asset.id))

            let kept = try placer.unpack(asset, into: target, keepingArchive: false, record: nil)

            #expect(kept == nil)
            let folder = layout.contentFolder(target.folderName)
            #expect(try String(contentsOfFile: "\(folder)/pages/1.txt", encoding: .utf8) == "one")
            #expect(try String(contentsOfFile: "\(folder)/cover.txt", encoding: .utf8) == "c")
            #expect(POSIX.exists(layout.contentRecord(asset.id)))
            #expect(!POSIX.exists(layout.stagingFolder(asset.id)))
        }
    }

    /// An archive with an entry outside the folder fails as an unsafe archive, and leaves no staging behind.
    @Test func refusesAnUnsafeArchiveAndCleansItsStaging() async throws {
        try await withTemporaryDirectory { root in
            let (placer, target, asset, layout) = try await prepare(root)
            try ArchiveFixtures.write(
                [.file("../escape.txt", Array("x".utf8))], format: .zip, to: layout.completedFile(asset.id))

            #expect {
                _ = try placer.unpack(asset, into: target, keepingArchive: false, record: nil)
            } throws: { ($0 as? NewsstandError)?.code == .unsafeArchiveEntry }
            #expect(!POSIX.exists(layout.stagingFolder(asset.id)))
            #expect(!POSIX.exists("\(root.path)/escape.txt"))
            #expect(!POSIX.exists("\(layout.contentFolder(target.folderName))/escape.txt"))
        }
    }

    /// Once the issue is being removed, nothing is placed into its folder and the finished file goes.
    @Test func placesNothingForAnIssueBeingRemoved() async throws {
        try await withTemporaryDirectory { root in
            let (placer, target, asset, layout) = try await prepare(root)
            try finishedFile(Array("bytes".utf8), asset, layout)
            try placer.catalog.write { changes in
                var issue = try #require(try changes.issue(named: target.issueName))
                issue.isBeingRemoved = true
                try changes.put(issue)
            }

            #expect(throws: DownloadRun.AssetRemoved.self) {
                _ = try placer.placeFile(of: asset, into: target, record: nil)
            }
            #expect(!POSIX.exists(layout.contentFolder(target.folderName)))
            #expect(!POSIX.exists(layout.completedFile(asset.id)))
        }
    }
}
