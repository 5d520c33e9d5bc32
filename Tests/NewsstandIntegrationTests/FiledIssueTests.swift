import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandCatalog

/// Issues filed by a layout template, through the library: their record, the uniqueness of their places,
/// the shared folder beside issues with folders of their own, and `prune`/`remove` taking only their files.
@Suite(.timeLimit(.minutes(5))) struct FiledIssueTests {
    static let date = IssueDate(year: 2026, month: 11, day: 20)!

    @Test func aFiledRecordRoundTripsAsVersion3() throws {
        var issue = Issue(name: "Title", date: Self.date, folderName: "Podcast/2026", fileStem: "2026-11-20 Title")
        issue.publication = "Podcast"
        let bytes = IssueRecord.encode(issue)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""version":3"#))
        let decoded = try bytes.withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r") }
        #expect(decoded.folderName == "Podcast/2026" && decoded.fileStem == "2026-11-20 Title")
        // An issue with a folder of its own keeps writing version 2, which earlier versions read.
        let own = IssueRecord.encode(Issue(name: "Own", date: Self.date, folderName: "Own"))
        #expect(String(decoding: own, as: UTF8.self).contains(#""version":2"#))
    }

    @Test(arguments: ["../x", "a//b", "/abs", "a/..", "library.json", ".hidden/x", ""])
    func aRecordWhoseFiledFolderCouldLeaveIsRefused(_ folder: String) {
        let text = #"{"date":"2026-11-20","file":"t","folder":"\#(folder)","name":"x","status":"none","version":3}"#
        #expect(throws: NewsstandError.self) {
            try Array(text.utf8).withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r") }
        }
    }

    @Test func twoIssuesNeverShareAPlace() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let plain = try LayoutTemplate("{publication}/{date}.{ext}")
            let a = try await library.addIssue(named: "A", date: Self.date, publication: "Pod", template: plain)
            let b = try await library.addIssue(named: "B", date: Self.date, publication: "pod", template: plain)
            #expect(a.folderName == "Pod" && a.fileStem == "2026-11-20")
            // Claimed case-insensitively, as folders are: a case-insensitive disk never merges them.
            #expect(b.folderName == "pod" && b.fileStem == "2026-11-20 (2)")
            let counted = try LayoutTemplate("{publication}/{date} {n}.{ext}")
            let c = try await library.addIssue(named: "C", date: Self.date, publication: "Pod", template: counted)
            let d = try await library.addIssue(named: "D", date: Self.date, publication: "Pod", template: counted)
            #expect(c.fileStem == "2026-11-20 1" && d.fileStem == "2026-11-20 2")
        }
    }

    @Test func theSharedFolderAndIssueFoldersNeverMeet() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let template = try LayoutTemplate("{publication}/{title}.{ext}")
            // An issue with a folder of its own named "Pod": the shared folder takes another name.
            let own = try await library.addIssue(named: "Pod", date: Self.date)
            let filed = try await library.addIssue(named: "Ep", date: Self.date, publication: "Pod", template: template)
            #expect(own.folderName == "Pod")
            #expect(filed.folderName == "Pod (2)")
            // And the other way round: the shared folder exists from the first filed issue on.
            _ = try await library.addIssue(named: "Ep2", date: Self.date, publication: "Show", template: template)
            let later = try await library.addIssue(named: "Show", date: Self.date)
            #expect(later.folderName == "Show (2)")
        }
    }

    @Test func pruneAndRemoveTakeOnlyTheIssuesOwnFiles() async throws {
        try await withTestServer { server in
            for n in 1...3 { server.serve("/e\(n)", bytes: patternBytes(count: 500 * n), contentType: "audio/mpeg") }
            try await withTemporaryDirectory { root in
                let library = try await Library.open(at: root)
                let template = try LayoutTemplate("{publication}/{date} {name}.{ext}")
                for n in 1...3 {
                    let url = try #require(URL(string: server.url("/e\(n)")))
                    try await library.addIssue(
                        named: "Ep \(n)", date: IssueDate(year: 2026, month: 11, day: 20 + n)!,
                        assets: [AssetRequest(url: url)], publication: "Cast", template: template)
                }
                let summary = try await library.download()
                #expect(summary.failed.isEmpty)
                let folder = root.appendingPathComponent("Cast").path
                try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
                func mp3s() throws -> [String] {
                    try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".mp3") }.sorted()
                }
                #expect(try mp3s() == ["2026-11-21 Ep 1.mp3", "2026-11-22 Ep 2.mp3", "2026-11-23 Ep 3.mp3"])
                // `verify` checks the shared folder against all its issues: only the user's file is no issue's.
                let report = try await library.verify()
                #expect(report.problems.map(\.kind) == [.orphan], "\(report.problems)")
                #expect(report.problems.first?.path == folder + "/notes.txt")
                let pruned = try await library.prune(PrunePolicy(keep: 1))
                #expect(pruned.removed.count == 2)
                #expect(try mp3s() == ["2026-11-23 Ep 3.mp3"])
                try await library.removeIssue(named: "Ep 3")
                #expect(try mp3s().isEmpty)
                // The user's file is no issue's: it stays, and so does the folder that holds it.
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["notes.txt"])
            }
        }
    }
}
