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

/// Issue 25, through the `Library` API against a real loopback server: feeds as publishers write them
/// (two items with one guid over changed syncs), `sync --backfill` while the feed answers 304, OPML
/// imported twice, and OPML export's `type`.
@Suite(.timeLimit(.minutes(5))) struct FeedConformanceTests {
    /// Two episodes sharing one guid, each with its own enclosure; `round` changes the bytes (a comment and
    /// the channel's description), not the items, so every sync reads a new body.
    static func duplicateGuidFeed(_ server: TestHTTPServer, round: Int, reversed: Bool = false) -> [UInt8] {
        var items = [
            """
            <item><title>One</title><guid isPermaLink="false">same</guid><pubDate>Mon, 02 Mar 2020 10:00:00 GMT</pubDate>\
            <enclosure url="\(server.url("/dup/1.mp3"))" length="1" type="audio/mpeg"/></item>
            """,
            """
            <item><title>Two</title><guid isPermaLink="false">same</guid><pubDate>Sun, 01 Mar 2020 10:00:00 GMT</pubDate>\
            <enclosure url="\(server.url("/dup/2.mp3"))" length="1" type="audio/mpeg"/></item>
            """,
        ]
        if reversed { items.reverse() }
        return Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <!-- round \(round) -->
            <rss version="2.0"><channel><title>Duplicate guid</title><description>round \(round)</description>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8)
    }

    /// The data loss of issue 25: each changed sync used to re-add "Two" with One's URL. Now both episodes
    /// keep their own URL over 5 changed syncs (one with the items in the other order), nothing is added
    /// or moved, the repeat is noted, and the subscription counts what the library holds.
    @Test func duplicateGuidKeepsBothEpisodesURLsOverFiveChangedSyncs() async throws {
        try await withTestServer { server in
            server.serve("/feed.xml", bytes: Self.duplicateGuidFeed(server, round: 0))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let url = try #require(URL(string: server.url("/feed.xml")))
                    let report = try await library.subscribe(
                        to: url, options: SubscribeOptions(initial: .all, downloadsAutomatically: false))
                    #expect(Set(report.addedIssues) == ["One", "Two"])
                    #expect(report.notes.contains { $0.contains("repeats the id \"same\"") })
                    for round in 1...5 {
                        server.serve("/feed.xml", bytes: Self.duplicateGuidFeed(server, round: round, reversed: round == 3))
                        let reports = try await library.sync()
                        let synced = try #require(reports.first)
                        #expect(!synced.failed, "round \(round)")
                        #expect(synced.addedIssues.isEmpty, "round \(round): added \(synced.addedIssues)")
                        #expect(synced.updatedIssues.isEmpty, "round \(round): moved \(synced.updatedIssues)")
                        #expect(synced.notes.contains { $0.contains("repeats the id") }, "round \(round)")
                        let one = try #require(try await library.issue(named: "One"))
                        let two = try #require(try await library.issue(named: "Two"))
                        #expect(one.assets.map(\.url.absoluteString) == [server.url("/dup/1.mp3")], "round \(round)")
                        #expect(two.assets.map(\.url.absoluteString) == [server.url("/dup/2.mp3")], "round \(round)")
                        // The issue records the feed's own id for both.
                        #expect(one.origin?.itemID == "same" && two.origin?.itemID == "same")
                        let held = try await library.subscriptions(countingIssues: true).first?.issuesHeld
                        let listed = try await library.issues().count
                        #expect(held == 2 && listed == 2, "round \(round): counts \(String(describing: held)), lists \(listed)")
                    }
                }
            }
        }
    }

    /// A later item that repeats an id and has no enclosure of its own is the same item again: dropped, noted.
    @Test func aRepeatedIdWithoutItsOwnEnclosureIsDropped() async throws {
        try await withTestServer { server in
            let body = """
                <rss version="2.0"><channel><title>Twice</title>
                <item><title>First</title><guid>x</guid><enclosure url="\(server.url("/x.mp3"))"/></item>
                <item><title>Again</title><guid>x</guid><enclosure url="\(server.url("/x.mp3"))"/></item>
                </channel></rss>
                """
            server.serve("/feed.xml", bytes: Array(body.utf8))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let url = try #require(URL(string: server.url("/feed.xml")))
                    let report = try await library.subscribe(
                        to: url, options: SubscribeOptions(initial: .all, downloadsAutomatically: false))
                    #expect(report.addedIssues == ["First"])
                    #expect(report.notes.contains { $0.contains("\"Again\"") && $0.contains("skipped (the first wins)") })
                    #expect(try await library.issues().count == 1)
                }
            }
        }
    }

    /// `sync --backfill` re-reads the body even though the feed answers 304 to the validators it has.
    @Test func backfillReadsTheBodyEvenWhenTheFeedAnswers304() async throws {
        try await withTestServer { server in
            let items = (1...3).map { n in
                "<item><title>Ep \(n)</title><guid>ep-\(n)</guid><pubDate>Sun, 0\(n) Mar 2020 10:00:00 GMT</pubDate>"
                    + "<enclosure url=\"\(server.url("/ep\(n).mp3"))\"/></item>"
            }
            let body = "<rss version=\"2.0\"><channel><title>Back</title>\(items.joined())</channel></rss>"
            server.serve("/feed.xml", bytes: Array(body.utf8))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let url = try #require(URL(string: server.url("/feed.xml")))
                    let report = try await library.subscribe(
                        to: url, options: SubscribeOptions(initial: .newest(1), downloadsAutomatically: false))
                    #expect(report.addedIssues == ["Ep 3"])
                    // Unchanged: a plain sync gets 304 and adds nothing.
                    #expect(try await library.sync().first?.addedIssues == [])
                    let backfilled = try await library.sync(backfill: true)
                    #expect(Set(backfilled.first?.addedIssues ?? []) == ["Ep 1", "Ep 2"])
                    #expect(try await library.issues().count == 3)
                }
            }
        }
    }

    /// Importing the same OPML twice: the second time every entry is "already subscribed", nothing changes.
    @Test func importingTheSameOPMLTwiceChangesNothing() async throws {
        try await withTestServer { server in
            for name in ["a", "b"] {
                let body =
                    "<rss version=\"2.0\"><channel><title>Feed \(name)</title><item><title>\(name) 1</title>"
                    + "<guid>\(name)-1</guid><enclosure url=\"\(server.url("/\(name).mp3"))\"/></item></channel></rss>"
                server.serve("/\(name).xml", bytes: Array(body.utf8))
            }
            let opml = """
                <?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>
                <outline type="rss" text="Feed a" xmlUrl="\(server.url("/a.xml"))"/>
                <outline type="rss" text="Feed b" xmlUrl="\(server.url("/b.xml"))"/>
                </body></opml>
                """
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let options = SubscribeOptions(downloadsAutomatically: false)
                    let first = try await library.subscribe(opml: Data(opml.utf8), options: options)
                    #expect(first.allSatisfy { (try? $0.result.get()) != nil && $0.alreadySubscribed == nil })
                    let before = try await library.subscriptions()
                    let second = try await library.subscribe(opml: Data(opml.utf8), options: options)
                    #expect(second.map(\.alreadySubscribed) == ["Feed a", "Feed b"])
                    #expect(second.allSatisfy { (try? $0.result.get())?.addedIssues == [] })
                    let after = try await library.subscriptions()
                    #expect(after == before)
                    #expect(try await library.issues().count == 2)
                    // Export names every feed "rss", whatever its format.
                    let exported = OPMLDocument.export(after)
                    #expect(exported.components(separatedBy: "type=\"rss\"").count == 3)
                    #expect(!exported.contains("type=\"atom\""))
                }
            }
        }
    }
}
