import Foundation
import NewsstandTestSupport
import Synchronization
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

@Suite(.timeLimit(.minutes(5))) struct SweepTests {
    @Test func leftoversOfCompleteOrUnknownAssetsAreSwept() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: patternBytes(count: 1000))
            try await withTemporaryDirectory { root in
                let library = try await Library.open(at: root)
                let issue = try await library.addIssue(
                    named: "I", date: IssueDate(year: 2026, month: 11, day: 20)!,
                    assets: [AssetRequest(url: try #require(URL(string: server.url("/a.bin"))))])
                let downloads = root.appendingPathComponent(".downloads")
                try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
                // As if a crash hit after an unrelated asset's commit: its archive and record stayed behind.
                try Data(repeating: 1, count: 10).write(to: downloads.appendingPathComponent("0000deadbeef.done"))
                try Data("{}".utf8).write(to: downloads.appendingPathComponent("0000deadbeef.resume.json"))
                // And the per-asset lock file that earlier versions made.
                try Data().write(to: downloads.appendingPathComponent("0000deadbeef.lock"))
                try await library.download()
                try await library.shutdown()
                let left = try FileManager.default.contentsOfDirectory(atPath: downloads.path)
                #expect(left.allSatisfy(LibraryLayout.isSharedDownloadFile), "\(left)")
                #expect(try await library.issue(named: "I")?.assets.first?.id == issue.assets.first?.id)
            }
        }
    }
}
