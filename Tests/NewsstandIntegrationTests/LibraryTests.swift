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

@Suite(.timeLimit(.minutes(5))) struct LibraryTests {
    let date = IssueDate("2026-11-20")!

    @Test func addListShowRemove() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let url = try #require(URL(string: "http://127.0.0.1:9/a.pdf"))
            try await library.addIssue(named: "Old", date: IssueDate("2026-01-01")!)
            let issue = try await library.addIssue(named: "New", date: date, assets: [AssetRequest(url: url)])
            let asset = try await library.addAsset(
                toIssueNamed: "Old", AssetRequest(url: url, sha256: String(repeating: "F", count: 64)))
            #expect(asset.sha256 == String(repeating: "f", count: 64))
            #expect(try await library.issues().map(\.name) == ["New", "Old"])
            #expect(issue.assets.count == 1)
            // The folder is made on demand (or with the first file placed in it).
            #expect(!FileManager.default.fileExists(atPath: library.contentURL(for: issue).path))
            let folder = try await library.contentURL(forIssueNamed: "New")
            #expect(folder == library.contentURL(for: issue))
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)

            // A second Library on the same folder sees everything.
            let other = try await Library.open(at: root)
            #expect(try await other.issue(named: "Old")?.assets.count == 1)

            try await library.removeIssue(named: "New")
            #expect(!FileManager.default.fileExists(atPath: library.contentURL(for: issue).path))
            #expect(try await other.issues().map(\.name) == ["Old"])
        }
    }

    @Test func errorsChangeNothing() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: date)
            let before = try Data(contentsOf: root.appendingPathComponent("library.json"))
            await #expect(throws: NewsstandError.self) { try await library.addIssue(named: "A", date: date) }
            await #expect(throws: NewsstandError.self) { try await library.addIssue(named: "", date: date) }
            await #expect(throws: NewsstandError.self) { try await library.addIssue(named: "a\u{7}b", date: date) }
            await #expect(throws: NewsstandError.self) { try await library.addIssue(named: "nul\u{0}x", date: date) }
            await #expect(throws: NewsstandError.self) {
                try await library.addIssue(
                    named: "B", date: date, assets: [AssetRequest(url: URL(string: "file:///etc/passwd")!)])
            }
            await #expect(throws: NewsstandError.self) {
                try await library.addAsset(toIssueNamed: "missing", AssetRequest(url: URL(string: "http://x/y")!))
            }
            await #expect(throws: NewsstandError.self) { try await library.removeIssue(named: "missing") }
            let after = try Data(contentsOf: root.appendingPathComponent("library.json"))
            #expect(before == after)
        }
    }

    @Test func folderNamesAreUniqueAndContained() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            var folders = Set<String>()
            for name in ["a/b", "a_b", "A_B", "../a_b", "library.json", "..", ".", "/"] {
                let issue = try await library.addIssue(named: name, date: date)
                let folder = library.contentURL(for: issue)
                #expect(folder.deletingLastPathComponent().path == root.path)
                #expect(folders.insert(issue.folderName.lowercased()).inserted)
            }
            #expect(!folders.contains("library.json"))
        }
    }

    @Test func concurrentWritersInOneProcessAllLand() async throws {
        try await withTemporaryDirectory { root in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<16 {
                    group.addTask {
                        let library = try await Library.open(at: root)
                        try await library.addIssue(named: "Issue \(i)", date: date)
                    }
                }
                try await group.waitForAll()
            }
            let library = try await Library.open(at: root)
            #expect(try await library.issues().count == 16)
        }
    }

    @Test func unreadableManifestIsLeftAlone() async throws {
        try await withTemporaryDirectory { root in
            let path = root.appendingPathComponent("library.json")
            let garbage = Data("{\"version\": 1, \"issues\": [".utf8)
            try garbage.write(to: path)
            await #expect(throws: NewsstandError.self) { _ = try await Library.open(at: root) }
            #expect(try Data(contentsOf: path) == garbage)
        }
    }
}
