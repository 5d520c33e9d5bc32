import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandCovers

/// Covers and the sidecar through the `Library`: a feed's image fetched as an asset of its issue (role `cover`)
/// and made the cover after the download; `issue.json` written, round-tripping, rewritten when the issue
/// changes; the content's own `cover.jpg` never overwritten; removal takes the covers with the folder.
@Suite(.timeLimit(.minutes(5))) struct CoverLibraryTests {
    static func configuration() -> Library.Configuration {
        var configuration = Library.Configuration()
        configuration.coverMaker = CoverMaker()
        return configuration
    }

    static func rss(_ server: TestHTTPServer) -> [UInt8] {
        Array(
            """
            <?xml version="1.0"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>Pictures</title>
              <image><url>\(server.url("/channel.png"))</url><title>Pictures</title></image>
              <item><guid>one</guid><title>First</title><link>https://example.com/one</link>
                <description>&lt;p&gt;The &lt;b&gt;first&lt;/b&gt; one&lt;/p&gt;</description>
                <pubDate>Fri, 20 Nov 2026 08:00:00 GMT</pubDate>
                <enclosure url="\(server.url("/one.pdf"))" length="10" type="application/pdf"/>
                <itunes:image href="\(server.url("/one.jpg"))"/></item>
              <item><guid>two</guid><title>Second</title><pubDate>Sat, 21 Nov 2026 08:00:00 GMT</pubDate>
                <enclosure url="\(server.url("/two.pdf"))" length="10" type="application/pdf"/></item>
            </channel></rss>
            """.utf8)
    }

    func sidecar(_ library: Library, _ name: String) async throws -> IssueSidecar {
        let issue = try #require(try await library.issue(named: name))
        let data = try Data(contentsOf: library.contentURL(for: issue).appendingPathComponent("issue.json"))
        return try JSONDecoder().decode(IssueSidecar.self, from: data)
    }

    @Test func aFeedImageIsFetchedAsTheIssuesCoverSource() async throws {
        try await withTestServer { server in
            let art = try SampleImages.jpeg(width: 1400, height: 1800, red: 200, green: 30, blue: 30)
            let channel = try SampleImages.png(width: 300, height: 300, red: 0, green: 100, blue: 0)
            server.serve("/one.jpg", bytes: Array(art))
            server.serve("/channel.png", bytes: Array(channel))
            server.serve("/one.pdf", bytes: Array(CoverFixtures.pdf()))
            server.serve("/two.pdf", bytes: Array(CoverFixtures.pdf()))
            server.serve("/feed.xml", bytes: Self.rss(server))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: Self.configuration()) { library in
                    let url = try #require(URL(string: server.url("/feed.xml")))
                    _ = try await library.subscribe(to: url, options: SubscribeOptions(initial: .all))
                    let first = try #require(try await library.issue(named: "First"))
                    #expect(first.assets.map(\.role) == [.content, .cover])
                    #expect(first.source?.link == "https://example.com/one")
                    #expect(first.source?.description == "The first one")
                    let second = try #require(try await library.issue(named: "Second"))
                    #expect(second.assets.last?.url.path == "/channel.png")  // the channel's image stands in

                    try await library.download()
                    let covers = try await [library.issue(named: "First"), library.issue(named: "Second")].compactMap { $0 }
                    #expect(covers.allSatisfy { $0.status == .available })
                    let cover = try #require(library.cover(of: covers[0]))
                    #expect(cover.source == .feed && cover.file == "cover.jpg")
                    let folder = library.contentURL(for: covers[0])
                    #expect(try Data(contentsOf: folder.appendingPathComponent("cover.jpg")) == art)
                    #expect(library.cover(of: covers[1])?.source == .feed)
                    #expect(library.cover(of: covers[1])?.file == "cover.png")

                    // The report and the sidecar name it; the sidecar says what the folder is.
                    let sidecar = try await sidecar(library, "First")
                    #expect(sidecar.cover == cover)
                    #expect(sidecar.item?.guid == "one" && sidecar.item?.title == "First")
                    #expect(sidecar.subscription?.name == "Pictures")
                    #expect(sidecar.assets.map(\.type) == ["application/pdf", "image/jpeg"])
                    #expect(sidecar.assets.last?.role == "cover")
                    #expect(sidecar.assets.first?.sha256 == FileDigest.sha256(of: folder.appendingPathComponent("one.pdf").path))
                    #expect(sidecar.assets.first?.sha256?.count == 64)
                    // Reports show the content as `assets` and the feed's image apart, as `coverSource`; the
                    // `list --json` stream, which copies records byte for byte, says the same.
                    let report = library.report(for: covers[0])
                    #expect(report.assets.map(\.url) == [server.url("/one.pdf")])
                    #expect(report.coverSource?.url == server.url("/one.jpg") && report.coverSource?.role == "cover")
                    #expect(report.assetsTotal == 2)
                    #expect(report.source?.title == "First")
                    let listed = root.appendingPathComponent("list.json")
                    #expect(FileManager.default.createFile(atPath: listed.path, contents: nil))
                    try await library.writeJSONList(to: try FileHandle(forWritingTo: listed))
                    let stream = try JSONDecoder().decode([IssueReport].self, from: Data(contentsOf: listed))
                    #expect(Set(stream) == Set(covers.map { library.report(for: $0) }))
                    #expect(stream.allSatisfy { $0.coverSource != nil && $0.assets.count == 1 })

                    // Made already: a second call keeps it; --refresh makes it again.
                    let again = try await library.makeCovers(issues: ["First"], maker: CoverMaker())
                    #expect((try? again.first?.result.get()) == cover)
                }
            }
        }
    }

    @Test func theSidecarRoundTripsAndFollowsEveryChange() async throws {
        try await withTestServer { server in
            server.serve("/a.pdf", bytes: Array(CoverFixtures.pdf()))
            server.serve("/b.bin", bytes: patternBytes(count: 300))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: Self.configuration()) { library in
                    let asset = try AssetRequest(url: AssetRequest.parseURL(server.url("/a.pdf")))
                    _ = try await library.addIssue(named: "Daily 1", date: IssueDate("2026-11-20") ?? IssueDate(Date()), assets: [asset])
                    try await library.download()
                    let before = try await sidecar(library, "Daily 1")
                    #expect(before.name == "Daily 1" && before.date == "2026-11-20" && before.assets.count == 1)
                    #expect(before.cover?.source == .pdf)
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    #expect(try JSONDecoder().decode(IssueSidecar.self, from: encoder.encode(before)) == before)

                    // A change of the issue (an asset added) rewrites it, keeping the cover.
                    _ = try await library.addAsset(toIssueNamed: "Daily 1", AssetRequest(url: AssetRequest.parseURL(server.url("/b.bin"))))
                    let after = try await sidecar(library, "Daily 1")
                    #expect(after.assets.count == 2 && after.assets.last?.state == "pending")
                    #expect(after.cover == before.cover)
                    try await library.download()
                    let done = try await sidecar(library, "Daily 1")
                    #expect(done.assets.last?.state == "downloaded" && done.assets.last?.file == "b.bin")
                    let placed = try #require(try await library.issue(named: "Daily 1"))
                    #expect(done.assets.last?.sha256 == FileDigest.sha256(of: library.contentURL(for: placed).appendingPathComponent("b.bin").path))

                    // Removal takes the folder, covers and sidecar with it.
                    let folder = library.contentURL(for: try #require(try await library.issue(named: "Daily 1")))
                    try await library.removeIssue(named: "Daily 1")
                    #expect(!FileManager.default.fileExists(atPath: folder.path))
                }
            }
        }
    }

    @Test func theContentsOwnCoverFileIsNeverOverwritten() async throws {
        try await withTestServer { server in
            let own = try SampleImages.jpeg(width: 400, height: 500, red: 0, green: 0, blue: 0)
            server.serve("/cover.jpg", bytes: Array(own))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: Self.configuration()) { library in
                    let asset = try AssetRequest(url: AssetRequest.parseURL(server.url("/cover.jpg")))
                    _ = try await library.addIssue(named: "Own", date: IssueDate("2026-11-20") ?? IssueDate(Date()), assets: [asset])
                    try await library.download()
                    let issue = try #require(try await library.issue(named: "Own"))
                    let cover = try #require(library.cover(of: issue))
                    #expect(cover.file == "issue-cover.jpg" && cover.thumbnails["256"] == "issue-cover-256.jpg")
                    let folder = library.contentURL(for: issue)
                    #expect(try Data(contentsOf: folder.appendingPathComponent("cover.jpg")) == own)
                    let report = try await library.verify()
                    #expect(report.problems.isEmpty, "\(report.problems)")
                    #expect(try await library.verifyCovers(issues: nil, repair: false, maker: CoverMaker()).isEmpty)

                    // A damaged thumbnail is found and, with repair, made again.
                    let thumbnail = folder.appendingPathComponent("issue-cover-256.jpg")
                    let bytes = try Data(contentsOf: thumbnail)
                    try bytes.prefix(bytes.count / 2).write(to: thumbnail)
                    let found = try await library.verifyCovers(issues: nil, repair: true, maker: CoverMaker())
                    #expect(found.map(\.kind) == [.missingCover] && found.allSatisfy(\.repaired))
                    #expect(try await library.verifyCovers(issues: nil, repair: false, maker: CoverMaker()).isEmpty)
                }
            }
        }
    }
}
