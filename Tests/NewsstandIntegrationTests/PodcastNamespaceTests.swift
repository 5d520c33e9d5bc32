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

/// Issue 25's Podcasting 2.0 part through the `Library` API against a real loopback server.
@Suite(.timeLimit(.minutes(5))) struct PodcastNamespaceTests {
    static func feed(_ server: TestHTTPServer) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Talk</title>
            <item><title>Talk 1</title><guid>talk-1</guid><pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate>
            <enclosure url="\(server.url("/talk/1.mp3"))" length="4000" type="audio/mpeg"/>
            <podcast:transcript url="\(server.url("/talk/1.vtt"))" type="text/vtt"/>
            <podcast:transcript url="\(server.url("/talk/1.json"))" type="application/json"/>
            <podcast:chapters url="\(server.url("/talk/1.chapters.json"))" type="application/json+chapters"/>
            </item></channel></rss>
            """.utf8)
    }

    /// The episode, its preferred transcript (JSON over VTT) and its chapters are three assets of one issue,
    /// the text files never unpacked; all three are downloaded, the VTT never; a second sync changes nothing.
    @Test func transcriptAndChaptersAreDownloadedWithTheEpisodeAndASecondSyncChangesNothing() async throws {
        try await withTestServer { server in
            let media = Array(repeating: UInt8(7), count: 4000)
            let transcript = Array(#"{"version":"1.0.0","segments":[]}"#.utf8)
            let chapters = Array(#"{"version":"1.2.0","chapters":[]}"#.utf8)
            server.serve("/feed.xml", bytes: Self.feed(server))
            server.serve("/talk/1.mp3", bytes: media)
            server.serve("/talk/1.json", bytes: transcript)
            server.serve("/talk/1.vtt", bytes: Array("WEBVTT\n".utf8))
            server.serve("/talk/1.chapters.json", bytes: chapters)
            try await withTemporaryDirectory { root in
                let library = try await Library.open(at: root)
                let url = try #require(URL(string: server.url("/feed.xml")))
                let report = try await library.subscribe(
                    to: url, options: SubscribeOptions(initial: .all, downloadsAutomatically: false))
                #expect(report.addedIssues == ["Talk 1"])
                let summary = try await library.download(issues: ["Talk 1"])
                #expect(summary.finished.count == 3)

                let issue = try #require(try await library.issue(named: "Talk 1"))
                #expect(
                    issue.assets.map(\.url.absoluteString) == [
                        server.url("/talk/1.mp3"), server.url("/talk/1.json"), server.url("/talk/1.chapters.json"),
                    ])
                #expect(issue.assets.map(\.unpack) == [true, false, false])
                #expect(issue.status == .available)
                let folder = library.contentURL(for: issue)
                #expect(Array(try Data(contentsOf: folder.appendingPathComponent("1.mp3"))) == media)
                #expect(Array(try Data(contentsOf: folder.appendingPathComponent("1.json"))) == transcript)
                #expect(Array(try Data(contentsOf: folder.appendingPathComponent("1.chapters.json"))) == chapters)
                #expect(server.requestCount("/talk/1.vtt") == 0)

                // The feed's bytes change (so the body is read and merged again), its items do not.
                server.serve("/feed.xml", bytes: Self.feed(server) + Array("<!-- again -->".utf8))
                let synced = try #require(try await library.sync().first)
                #expect(!synced.failed)
                #expect(synced.addedIssues.isEmpty)
                #expect(synced.updatedIssues.isEmpty)
                let again = try #require(try await library.issue(named: "Talk 1"))
                #expect(again == issue)
                #expect(try await library.issues().count == 1)
                let before = ["/talk/1.mp3", "/talk/1.json", "/talk/1.chapters.json"].map(server.requestCount)
                _ = try await library.download(issues: ["Talk 1"])
                #expect(["/talk/1.mp3", "/talk/1.json", "/talk/1.chapters.json"].map(server.requestCount) == before)
                try await library.shutdown()
            }
        }
    }

    static func show(
        _ server: TestHTTPServer, guid: String, episodes: ClosedRange<Int>, title: String = "Show"
    ) -> [UInt8] {
        let items = episodes.reversed().map { n in
            """
            <item><title>Show \(n)</title><guid>show-\(n)</guid><pubDate>Mon, \(10 + n) Nov 2026 10:00:00 GMT</pubDate>\
            <enclosure url="\(server.url("/show/\(n).mp3"))" length="10" type="audio/mpeg"/></item>
            """
        }
        return Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>\(title)</title>
            <podcast:guid>\(guid)</podcast:guid>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8)
    }

    /// A show whose feed moved to another URL without a redirect or itunes:new-feed-url: subscribing to the new
    /// URL finds the subscription by its podcast:guid, which follows the move and adds only the new episode.
    /// Another show (another guid) at another URL stays a subscription of its own.
    @Test func theSamePodcastGUIDAtAnotherURLIsTheSameSubscription() async throws {
        try await withTestServer { server in
            server.serve("/old/feed.xml", bytes: Self.show(server, guid: "guid-a", episodes: 1...2))
            server.serve("/new/feed.xml", bytes: Self.show(server, guid: "guid-a", episodes: 1...3))
            server.serve("/other/feed.xml", bytes: Self.show(server, guid: "guid-b", episodes: 7...7, title: "Other"))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let old = try #require(URL(string: server.url("/old/feed.xml")))
                    let new = try #require(URL(string: server.url("/new/feed.xml")))
                    let options = SubscribeOptions(initial: .all, downloadsAutomatically: false)
                    let first = try await library.subscribe(to: old, options: options)
                    #expect(Set(first.addedIssues) == ["Show 1", "Show 2"])
                    #expect(try await library.subscriptions().first?.podcastGUID == "guid-a")

                    let moved = try await library.subscribe(to: new, options: options)
                    #expect(moved.addedIssues == ["Show 3"])
                    #expect(moved.movedTo == new)
                    let subscriptions = try await library.subscriptions()
                    #expect(subscriptions.count == 1)
                    #expect(subscriptions.first?.url == new)
                    #expect(subscriptions.first?.previousURLs == [old])
                    #expect(subscriptions.first?.name == first.subscription)
                    #expect(try await library.issues().count == 3)

                    let synced = try #require(try await library.sync().first)
                    #expect(synced.addedIssues.isEmpty && synced.updatedIssues.isEmpty)

                    let other = try await library.subscribe(
                        to: try #require(URL(string: server.url("/other/feed.xml"))), options: options)
                    #expect(other.addedIssues == ["Show 7"])
                    #expect(try await library.subscriptions().count == 2)
                }
            }
        }
    }

    /// `--prefer audio/opus`: of an enclosure and its alternate enclosures only the Opus file is fetched, once;
    /// a second sync changes nothing. Without a policy the same feed keeps taking the enclosure.
    @Test func thePreferredRenditionIsTheOnlyOneFetched() async throws {
        try await withTestServer { server in
            let opus = Array(repeating: UInt8(1), count: 300)
            let body = Array(
                """
                <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Codecs</title>
                <item><title>Codec 1</title><guid>codec-1</guid>
                <enclosure url="\(server.url("/codec/1.mp3"))" length="900" type="audio/mpeg"/>
                <podcast:alternateEnclosure type="audio/mpeg" length="900" default="true">
                <podcast:source uri="\(server.url("/codec/1.mp3"))"/></podcast:alternateEnclosure>
                <podcast:alternateEnclosure type="audio/opus" length="300">
                <podcast:source uri="\(server.url("/codec/1.opus"))"/>
                <podcast:source uri="\(server.url("/mirror/1.opus"))"/></podcast:alternateEnclosure>
                </item></channel></rss>
                """.utf8)
            server.serve("/feed.xml", bytes: body)
            server.serve("/codec/1.mp3", bytes: Array(repeating: UInt8(2), count: 900))
            server.serve("/codec/1.opus", bytes: opus)
            try await withTemporaryDirectory { root in
                let library = try await Library.open(at: root)
                var options = SubscribeOptions(initial: .all, downloadsAutomatically: false)
                options.mediaPolicy = MediaPolicy(preferredType: "audio/opus", maxBytes: 1000)
                let report = try await library.subscribe(
                    to: try #require(URL(string: server.url("/feed.xml"))), options: options)
                #expect(report.addedIssues == ["Codec 1"])
                #expect(try await library.subscriptions().first?.mediaPolicy.preferredType == "audio/opus")
                _ = try await library.download(issues: ["Codec 1"])
                let issue = try #require(try await library.issue(named: "Codec 1"))
                #expect(issue.assets.map(\.url.absoluteString) == [server.url("/codec/1.opus")])
                #expect(issue.status == .available)
                #expect(Array(try Data(contentsOf: library.contentURL(for: issue).appendingPathComponent("1.opus"))) == opus)
                #expect(server.requestCount("/codec/1.mp3") == 0)
                #expect(server.requestCount("/mirror/1.opus") == 0)

                server.serve("/feed.xml", bytes: body + Array("<!-- again -->".utf8))
                let synced = try #require(try await library.sync().first)
                #expect(synced.addedIssues.isEmpty && synced.updatedIssues.isEmpty)
                #expect(try await library.issue(named: "Codec 1") == issue)
                _ = try await library.download(issues: ["Codec 1"])
                #expect(server.requestCount("/codec/1.opus") == 1)
                #expect(server.requestCount("/codec/1.mp3") == 0)
                try await library.shutdown()
            }
        }
    }

    /// A transcript published after the episode's issue was made is attached to that issue once, reported as
    /// an extended issue (what `sync` downloads), and fetched by the next download; the next sync adds nothing.
    @Test func aLateTranscriptIsAttachedAndDownloaded() async throws {
        try await withTestServer { server in
            let withTranscript = Self.feed(server)
            let without = Array(
                String(decoding: withTranscript, as: UTF8.self).split(separator: "\n")
                    .filter { !$0.contains("podcast:transcript") && !$0.contains("podcast:chapters") }
                    .joined(separator: "\n").utf8)
            server.serve("/feed.xml", bytes: without)
            server.serve("/talk/1.mp3", bytes: Array(repeating: UInt8(7), count: 4000))
            server.serve("/talk/1.json", bytes: Array("{}".utf8))
            server.serve("/talk/1.chapters.json", bytes: Array("{}".utf8))
            try await withTemporaryDirectory { root in
                let library = try await Library.open(at: root)
                let url = try #require(URL(string: server.url("/feed.xml")))
                _ = try await library.subscribe(to: url, options: SubscribeOptions(initial: .all))
                _ = try await library.download(issues: ["Talk 1"])
                #expect(try await library.issue(named: "Talk 1")?.assets.count == 1)

                server.serve("/feed.xml", bytes: withTranscript)
                let synced = try #require(try await library.sync().first)
                #expect(synced.addedIssues.isEmpty)
                #expect(synced.extendedIssues == ["Talk 1"])
                #expect(synced.keptIssues == ["Talk 1"])
                _ = try await library.download(issues: synced.keptIssues)
                let issue = try #require(try await library.issue(named: "Talk 1"))
                #expect(
                    issue.assets.map(\.url.absoluteString) == [
                        server.url("/talk/1.mp3"), server.url("/talk/1.json"), server.url("/talk/1.chapters.json"),
                    ])
                #expect(issue.status == .available)
                #expect(server.requestCount("/talk/1.mp3") == 1)
                #expect(server.requestCount("/talk/1.json") == 1)

                server.serve("/feed.xml", bytes: withTranscript + Array("<!-- again -->".utf8))
                let again = try #require(try await library.sync().first)
                #expect(again.extendedIssues.isEmpty && again.updatedIssues.isEmpty && again.addedIssues.isEmpty)
                #expect(try await library.issue(named: "Talk 1") == issue)
                try await library.shutdown()
            }
        }
    }
}
