import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `subscribe`, `sync` and friends as real processes against the NIO test server serving feeds that
/// change between rounds, move, vanish, turn hostile, and sign their enclosure links.
@Suite(.timeLimit(.minutes(5))) struct SubscriptionCLITests {
    struct Episode {
        var guid: String?
        var title: String
        var date: String  // RFC 822
        var url: String
    }

    static func rss(_ episodes: [Episode], title: String = "Loopback Podcast", extra: String = "") -> [UInt8] {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>\(title)</title><link>http://127.0.0.1/</link>\(extra)

            """
        for episode in episodes {
            xml += "<item><title>\(episode.title)</title><pubDate>\(episode.date)</pubDate>"
            if let guid = episode.guid { xml += "<guid isPermaLink=\"false\">\(guid)</guid>" }
            xml += "<enclosure url=\"\(episode.url.replacingOccurrences(of: "&", with: "&amp;"))\" type=\"audio/mpeg\" length=\"1000\"/></item>\n"
        }
        xml += "</channel></rss>\n"
        return Array(xml.utf8)
    }

    func run(_ args: [String], _ library: URL, environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.issues(args, library: library, environment: environment)
    }

    func json(_ args: [String], _ library: URL) throws -> Any {
        let r = try run(args + ["--json"], library)
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
    }

    func issueNames(_ library: URL) throws -> [String] {
        let list = try #require(try json(["list"], library) as? [[String: Any]])
        return list.compactMap { $0["name"] as? String }.sorted()
    }

    /// Every catalog file with its bytes: two equal snapshots mean nothing in the catalog was written.
    func catalogSnapshot(_ library: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let root = library.path
        files["library.json"] = FileManager.default.contents(atPath: root + "/library.json")
        if let walker = FileManager.default.enumerator(atPath: root + "/.catalog") {
            for case let path as String in walker {
                var isDirectory: ObjCBool = false
                let full = root + "/.catalog/" + path
                if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files[path] = FileManager.default.contents(atPath: full)
                }
            }
        }
        return files
    }

    func episodes(_ server: TestHTTPServer, _ count: Int, query: String = "") -> [Episode] {
        (1...count).reversed().map { n in
            Episode(
                guid: "loop-\(n)", title: "Episode \(n)", date: "Fri, \(String(format: "%02d", n)) Nov 2026 06:00:00 GMT",
                url: server.url("/audio/ep\(n).mp3") + query)
        }
    }

    @Test func subscribeAddsTheNewestAndAnUnchangedFeedWritesNothing() async throws {
        try await withTestServer { server in
            for n in 1...3 { server.serve("/audio/ep\(n).mp3", bytes: patternBytes(count: 1000 + n)) }
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 3)), contentType: "application/rss+xml")
            try await withTemporaryDirectory { lib in
                let r = try run(["subscribe", server.url("/feed.xml")], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout.contains("subscribed \"Loopback Podcast\""), "\(r.stdout)")
                #expect(r.stdout.contains("added \"Episode 3\""), "\(r.stdout)")
                #expect(r.stdout.contains("2 older items remembered as seen"), "\(r.stdout)")
                #expect(try issueNames(lib) == ["Episode 3"])
                let show = try #require(try json(["show", "Episode 3"], lib) as? [String: Any])
                #expect(show["status"] as? String == "available", "the new issue was downloaded")
                #expect(show["date"] as? String == "2026-11-03")
                let origin = try #require(show["origin"] as? [String: Any])
                #expect(origin["item"] as? String == "loop-3")
                #expect(origin["matched"] as? String == "id")

                // A 304 round: conditional headers sent, nothing written to the catalog.
                let before = try catalogSnapshot(lib)
                let sync = try run(["sync"], lib)
                #expect(sync.status == 0, "\(sync.stderr)")
                #expect(sync.stdout.contains("\"Loopback Podcast\": unchanged"), "\(sync.stdout)")
                let last = try #require(server.requests("/feed.xml").last)
                #expect(last.header("If-None-Match") != nil)
                #expect(last.header("If-Modified-Since") != nil)
                #expect(try catalogSnapshot(lib) == before)
                let subscriptions = try #require(try json(["subscriptions"], lib) as? [[String: Any]])
                #expect(subscriptions.first?["lastOutcome"] as? String == "unchanged")
                #expect(subscriptions.first?["itemsSeen"] as? Int == 3)
                #expect(subscriptions.first?["format"] as? String == "rss")

                // A 200 with the same body (a server without validators) writes nothing either.
                server.setFaults("/feed.xml", Faults(omitValidators: true))
                let again = try run(["sync"], lib)
                #expect(again.stdout.contains("unchanged"), "\(again.stdout)")
                #expect(try catalogSnapshot(lib) == before)
            }
        }
    }

    @Test func aChangedGUIDARotatedQueryAndANewItemAddExactlyOneIssue() async throws {
        try await withTestServer { server in
            for n in 1...4 { server.serve("/audio/ep\(n).mp3", bytes: patternBytes(count: 500 + n)) }
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 3, query: "?sig=one")))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/feed.xml"), "--initial", "all", "--no-download"], lib).status == 0)
                #expect(try issueNames(lib) == ["Episode 1", "Episode 2", "Episode 3"])
                var changed = episodes(server, 4, query: "?sig=two")
                changed[1].guid = "https://new-cms.example/items/3"  // episode 3 gets a new guid
                changed[3].guid = nil  // episode 1 loses its guid; its enclosure (without query) stays
                server.serve("/feed.xml", bytes: Self.rss(changed))
                for _ in 0..<2 {
                    let r = try run(["sync", "--no-download"], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                #expect(try issueNames(lib) == ["Episode 1", "Episode 2", "Episode 3", "Episode 4"])
                let show = try #require(try json(["show", "Episode 3"], lib) as? [String: Any])
                let origin = try #require(show["origin"] as? [String: Any])
                #expect(origin["matched"] as? String == "enclosure")
                #expect(origin["item"] as? String == "https://new-cms.example/items/3")
                let assets = try #require(show["assets"] as? [[String: Any]])
                #expect((assets.first?["url"] as? String)?.hasSuffix("ep3.mp3?sig=two") == true, "\(assets)")
            }
        }
    }

    @Test func permanentRedirectsMoveTheSubscriptionAndTemporaryOnesDoNot() async throws {
        try await withTestServer { server in
            server.serve("/audio/ep1.mp3", bytes: patternBytes(count: 100))
            server.serve("/new.xml", bytes: Self.rss(episodes(server, 1)))
            server.serve("/old.xml", bytes: [])
            server.setFaults("/old.xml", Faults(redirectTo: server.url("/new.xml"), redirectStatus: 302))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/old.xml"), "--no-download"], lib).status == 0)
                var subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["url"] as? String == server.url("/old.xml"))
                server.setFaults("/old.xml", Faults(redirectTo: server.url("/new.xml"), redirectStatus: 301))
                server.serve("/new.xml", bytes: Self.rss(episodes(server, 1), title: "Loopback Podcast (moved)"))
                let r = try run(["sync"], lib)
                #expect(r.stdout.contains("moved to \(server.url("/new.xml"))"), "\(r.stdout)")
                subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["url"] as? String == server.url("/new.xml"))
                #expect(subscription["previousURLs"] as? [String] == [server.url("/old.xml")])
                // The log says so: added once, moved once (the 302 moved nothing), naming the URL it left.
                let events = try run(["events", "--json"], lib).stdout.split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                let kinds = events.compactMap { $0["kind"] as? String }.filter { $0.hasPrefix("subscription.") }
                #expect(kinds == ["subscription.added", "subscription.moved"], "\(kinds)")
                let moved = events.first { $0["kind"] as? String == "subscription.moved" }
                #expect((moved?["subscription"] as? [String: Any])?["url"] as? String == server.url("/new.xml"), "\(moved ?? [:])")
                #expect((moved?["detail"] as? String) == server.url("/old.xml"), "\(moved ?? [:])")
            }
        }
    }

    /// A feed sent a byte a second used to hold `sync` for good (cron then stacks one per period): the feed fetch
    /// had neither the downloads' stall limit nor a deadline. Now the stall limit gives it up and `sync` ends.
    @Test func aDrippingFeedIsGivenUpAndTheSyncEnds() async throws {
        try await withTestServer { server in
            server.serve("/audio/ep1.mp3", bytes: patternBytes(count: 100))
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 1)))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/feed.xml"), "--no-download"], lib).status == 0)
                server.serve("/feed.xml", bytes: Self.rss(episodes(server, 2)))
                server.setFaults("/feed.xml", Faults(bytesPerSecond: 1))
                let started = ContinuousClock.now
                let sync = try CommandRunner.start(
                    CommandRunner.issuesBinary,
                    ["sync", "--library", lib.path, "--no-download", "--stall-bytes", "1K", "--stall-seconds", "2"],
                    environment: CommandRunner.environment())
                // About 8 s alone; the bounds leave room for a loaded two-core machine (the feed would take
                // 20 minutes at this rate).
                let r = try await sync.wait(timeout: .seconds(150))
                #expect(ContinuousClock.now - started < .seconds(120))
                #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
                #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains("stalled"), "\(r.stderr)")
                #expect(try issueNames(lib).count == 1, "nothing of the unread feed was added")
            }
        }
    }

    /// A 301 to another host that answers 304 used to move the subscription there without a feed ever read
    /// at the new address. It moves only once the new address answers 200 with a feed that parses.
    @Test func aPermanentRedirectToA304MovesNothing() async throws {
        try await withTestServer { server in
            try await withTestServer { other in
                server.serve("/audio/ep1.mp3", bytes: patternBytes(count: 100))
                server.serve("/feed.xml", bytes: Self.rss(episodes(server, 1)))
                try await withTemporaryDirectory { lib in
                    #expect(try run(["subscribe", server.url("/feed.xml"), "--no-download"], lib).status == 0)
                    server.setFaults("/feed.xml", Faults(redirectTo: other.url("/feed.xml"), redirectStatus: 301))
                    other.serve("/feed.xml", bytes: [])
                    other.setFaults("/feed.xml", Faults(status: 304))
                    let r = try run(["sync", "--no-download"], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                    #expect(!r.stdout.contains("moved"), "\(r.stdout)")
                    #expect(other.requestCount("/feed.xml") == 1)
                    var subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                    #expect(subscription["url"] as? String == server.url("/feed.xml"))

                    // The new address serves the feed (a newer one: the same bytes would carry the same ETag and
                    // answer 304 again): now the move is made.
                    other.setFaults("/feed.xml", Faults())
                    other.serve("/feed.xml", bytes: Self.rss(episodes(server, 2)))
                    let moved = try run(["sync", "--no-download"], lib)
                    #expect(moved.status == 0, "\(moved.stderr)")
                    #expect(moved.stdout.contains("moved to \(other.url("/feed.xml"))"), "\(moved.stdout)")
                    subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                    #expect(subscription["url"] as? String == other.url("/feed.xml"))
                }
            }
        }
    }

    @Test func aFailingSubscriptionNeverStopsTheOthers() async throws {
        try await withTestServer { server in
            server.serve("/audio/ep1.mp3", bytes: patternBytes(count: 100))
            server.serve("/good.xml", bytes: Self.rss(episodes(server, 1), title: "Good"))
            server.serve("/loop-a.xml", bytes: Self.rss(episodes(server, 1), title: "Looping"))
            server.serve("/gone.xml", bytes: Self.rss(episodes(server, 1), title: "Gone"))
            try await withTemporaryDirectory { lib in
                for path in ["/good.xml", "/loop-a.xml", "/gone.xml"] {
                    let r = try run(["subscribe", server.url(path), "--initial", "0"], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                server.setFaults("/loop-a.xml", Faults(redirectTo: server.url("/loop-b.xml"), redirectStatus: 301))
                server.setFaults("/loop-b.xml", Faults(redirectTo: server.url("/loop-a.xml"), redirectStatus: 301))
                server.setFaults("/gone.xml", Faults(status: 410, statusResponses: 100))
                server.serve("/audio/ep2.mp3", bytes: patternBytes(count: 200))
                server.serve("/good.xml", bytes: Self.rss(episodes(server, 2), title: "Good"))
                let r = try run(["sync", "--no-download"], lib)
                #expect(r.status == 1)
                #expect(r.stderr.contains("error: \"Looping\":") && r.stderr.contains("redirect"), "\(r.stderr)")
                #expect(r.stderr.contains("error: \"Gone\":") && r.stderr.contains("410"), "\(r.stderr)")
                #expect(r.stdout.contains("\"Good\": 1 new issue"), "\(r.stdout)")
                let subscriptions = try #require(try json(["subscriptions"], lib) as? [[String: Any]])
                let gone = try #require(subscriptions.first { $0["name"] as? String == "Gone" })
                #expect(gone["gone"] as? Bool == true && gone["paused"] as? Bool == true)
                // A paused subscription is skipped by a plain sync, and synced when named.
                let count = server.requestCount("/gone.xml")
                _ = try run(["sync", "--no-download", "Good"], lib)
                _ = try run(["sync", "--no-download"], lib)
                #expect(server.requestCount("/gone.xml") == count)
                #expect(try run(["sync", "--no-download", "Gone"], lib).status == 1)
                #expect(server.requestCount("/gone.xml") == count + 1)
            }
        }
    }

    @Test func anHTMLPageIsFollowedToItsFeed() async throws {
        try await withTestServer { server in
            server.serve("/audio/ep1.mp3", bytes: patternBytes(count: 100))
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 1)))
            server.serve("/nofeed.html", bytes: Array("<!doctype html><html><head><title>x</title></head></html>".utf8), contentType: "text/html")
            server.serve(
                "/index.html",
                bytes: Array(
                    """
                    <!doctype html><html><head><title>Loopback</title>
                    <link rel="alternate" type="application/rss+xml" title="Podcast" href="/feed.xml">
                    </head><body>Our podcast</body></html>
                    """.utf8), contentType: "text/html")
            try await withTemporaryDirectory { lib in
                let r = try run(["subscribe", server.url("/index.html"), "--no-download"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout.contains("is an HTML page"), "\(r.stdout)")
                let subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["url"] as? String == server.url("/feed.xml"))
                let bad = try run(["subscribe", server.url("/nofeed.html")], lib)
                #expect(bad.status == 1)
                #expect(bad.stderr.hasPrefix("error: ") && bad.stderr.contains("HTML page"), "\(bad.stderr)")

                // A feed URL that turns into a page: each sync reads the feed it links, even while the page
                // itself does not change (its validators say nothing about the feed).
                server.serve("/audio/ep2.mp3", bytes: patternBytes(count: 200))
                server.serve("/feed2.xml", bytes: Self.rss(episodes(server, 1)))
                server.serve(
                    "/feed.xml",
                    bytes: Array(
                        "<html><head><link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed2.xml\"></head></html>".utf8),
                    contentType: "text/html")
                let first = try run(["sync", "--no-download"], lib)
                #expect(first.status == 0 && first.stdout.contains("is an HTML page"), "\(first.stdout) \(first.stderr)")
                server.serve("/feed2.xml", bytes: Self.rss(episodes(server, 2)))
                let second = try run(["sync", "--no-download"], lib)
                #expect(second.stdout.contains("1 new issue"), "\(second.stdout)")
                #expect(try issueNames(lib).contains("Episode 2"))
            }
        }
    }

    @Test func hostileFeedsAreRefusedAndRecordNothing() async throws {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
            <rss version="2.0"><channel><title>&c;</title></channel></rss>
            """
        let external = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>
            <rss version="2.0"><channel><title>&x;</title></channel></rss>
            """
        try await withTestServer { server in
            server.serve("/laughs.xml", bytes: Array(laughs.utf8))
            server.serve("/external.xml", bytes: Array(external.utf8))
            server.serve("/truncated.xml", bytes: Array(Self.rss(episodes(server, 2)).prefix(200)))
            server.serve("/huge.xml", bytes: [UInt8](repeating: 0x20, count: 33 << 20))
            try await withTemporaryDirectory { lib in
                for (path, words) in [
                    ("/laughs.xml", "entit"), ("/external.xml", "entit"), ("/truncated.xml", "feed"),
                    ("/huge.xml", "bytes"),
                ] {
                    let r = try run(["subscribe", server.url(path)], lib)
                    #expect(r.status == 1, "\(path)")
                    #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(words), "\(path): \(r.stderr)")
                }
                let listed = try run(["subscriptions", "--json"], lib)
                #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(listed.stdout)")
            }
        }
    }

    @Test func twoConcurrentSyncsNeverAddAnItemTwice() async throws {
        try await withTestServer { server in
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 2)))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/feed.xml"), "--initial", "0"], lib).status == 0)
                for round in 0..<3 {
                    let count = 3 + round * 5
                    server.serve("/feed.xml", bytes: Self.rss(episodes(server, count)))
                    let children = try (0..<4).map { _ in
                        try CommandRunner.start(
                            CommandRunner.issuesBinary, ["sync", "--library", lib.path, "--no-download"],
                            environment: CommandRunner.environment())
                    }
                    for child in children {
                        let r = try await child.wait()
                        #expect(r.status == 0, "\(r.stderr)")
                    }
                    #expect(try issueNames(lib).count == count - 2, "round \(round)")
                }
            }
        }
    }

    @Test func anExpiredSignedLinkContinuesAtTheNewURLWithoutRefetching() async throws {
        try await withTestServer { server in
            let audio = patternBytes(count: 3_000_000)
            server.serve("/audio/ep1.mp3", bytes: audio)
            server.requireSignature("/audio/ep1.mp3", valid: "one", expiresOnCutTo: "two")
            server.setFaults("/audio/ep1.mp3", Faults(cutAfterBytes: 1_000_000, cutResponses: 1))
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 1, query: "?sig=one")))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/feed.xml"), "--no-download"], lib).status == 0)
                // The publisher re-signs its links; the library still has the old one.
                server.serve("/feed.xml", bytes: Self.rss(episodes(server, 1, query: "?sig=two")))
                let r = try run(["download"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                let show = try #require(try json(["show", "Episode 1"], lib) as? [String: Any])
                #expect(show["status"] as? String == "available")
                let asset = try #require((show["assets"] as? [[String: Any]])?.first)
                #expect((asset["url"] as? String)?.hasSuffix("?sig=two") == true)
                #expect(server.bodyBytesSent("/audio/ep1.mp3") <= audio.count, "no byte fetched twice")
                let last = try #require(server.requests("/audio/ep1.mp3").last)
                #expect(last.uri.hasSuffix("?sig=two"))
                #expect(last.header("Range") != nil && last.header("If-Range") != nil)
            }
        }
    }

    @Test func optionsPauseRenameAndUnsubscribe() async throws {
        try await withTestServer { server in
            for n in 1...2 { server.serve("/audio/ep\(n).mp3", bytes: patternBytes(count: 100 + n)) }
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 2)))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/feed.xml"), "--name", "Loop", "--initial", "all", "--no-download"], lib).status == 0)
                let dup = try run(["subscribe", server.url("/feed.xml")], lib)
                #expect(dup.status == 1 && dup.stderr.contains("already subscribed"), "\(dup.stderr)")
                #expect(try run(["configure", "Loop", "--rename", "Loopback", "--keep", "5", "--download"], lib).status == 0)
                #expect(try run(["pause", "Loopback"], lib).status == 0)
                var subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["name"] as? String == "Loopback")
                #expect(subscription["keep"] as? Int == 5)
                #expect(subscription["paused"] as? Bool == true)
                #expect(subscription["download"] as? Bool == true)
                #expect(try run(["unpause", "Loopback"], lib).status == 0)
                subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["paused"] as? Bool == false)
                let table = try run(["subscriptions"], lib)
                #expect(table.stdout.contains("Loopback") && table.stdout.contains("keep 5"), "\(table.stdout)")
                let missing = try run(["sync", "Nope"], lib)
                #expect(missing.status == 1 && missing.stderr.contains("no subscription named \"Nope\""))

                #expect(try run(["unsubscribe", "Loopback"], lib).status == 0)
                #expect(try issueNames(lib).count == 2, "issues stay")
                #expect(try run(["subscribe", server.url("/feed.xml"), "--name", "Again", "--initial", "all", "--no-download"], lib).status == 0)
                let names = try issueNames(lib)
                #expect(names.count == 4, "new issues under suffixed names: \(names)")
                #expect(names.contains("Episode 2 (2026-11-02)"), "\(names)")
                let removed = try run(["unsubscribe", "Again", "--remove-issues"], lib)
                #expect(removed.status == 0, "\(removed.stderr)")
                #expect(try issueNames(lib) == ["Episode 1", "Episode 2"])
            }
        }
    }

    @Test func opmlExportAndTolerantImport() async throws {
        try await withTestServer { server in
            server.serve("/a.xml", bytes: Self.rss([], title: "Feed A & Co"))
            server.serve("/b.xml", bytes: Self.rss([], title: "Feed B"))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/a.xml")], lib).status == 0)
                #expect(try run(["subscribe", server.url("/b.xml")], lib).status == 0)
                let exported = try run(["subscriptions", "--opml"], lib)
                #expect(exported.stdout.contains("Feed A &amp; Co"))
                let opml = exported.stdout.replacingOccurrences(
                    of: "</body>",
                    with: """
                        <outline text="Broken" xmlUrl="ftp://nowhere/feed"/>
                        <outline text="Missing" xmlUrl="\(server.url("/missing.xml"))"/>
                        </body>
                        """)
                let file = lib.appendingPathComponent("subs.opml")
                try Data(opml.utf8).write(to: file)
                try await withTemporaryDirectory { other in
                    let r = try run(["subscribe", "--opml", file.path], other)
                    #expect(r.status == 1)
                    #expect(r.stdout.contains("subscribed \"Feed A & Co\"") && r.stdout.contains("subscribed \"Feed B\""), "\(r.stdout)")
                    #expect(r.stderr.contains("error: \"Broken\"") && r.stderr.contains("error: \"Missing\""), "\(r.stderr)")
                    let names = try #require(try json(["subscriptions"], other) as? [[String: Any]]).compactMap { $0["name"] as? String }
                    #expect(names == ["Feed A & Co", "Feed B"])
                }
            }
        }
    }

    @Test func itunesNewFeedURLMovesOnlyAfterTheNewLocationParses() async throws {
        try await withTestServer { server in
            for n in 1...2 { server.serve("/audio/ep\(n).mp3", bytes: patternBytes(count: 200 + n)) }
            server.serve("/old.xml", bytes: Self.rss(episodes(server, 1)))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/old.xml")], lib).status == 0)
                // The new location is not a feed yet: the subscription stays where it is.
                server.serve("/new.xml", bytes: Array("not a feed".utf8), contentType: "text/plain")
                let moving = "<itunes:new-feed-url>\(server.url("/new.xml"))</itunes:new-feed-url>"
                server.serve("/old.xml", bytes: Self.rss(episodes(server, 1), extra: moving))
                let stay = try run(["sync"], lib)
                #expect(stay.status == 0, "\(stay.stderr)")
                #expect(stay.stdout.contains("which did not read as a feed"), "\(stay.stdout)")
                var subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["url"] as? String == server.url("/old.xml"))
                // Once it parses, the move happens, and its new item is added and downloaded.
                server.serve("/new.xml", bytes: Self.rss(episodes(server, 2)))
                server.serve("/old.xml", bytes: Self.rss(episodes(server, 1), extra: moving + "<!-- v3 -->"))
                let moved = try run(["sync"], lib)
                #expect(moved.status == 0, "\(moved.stderr)")
                #expect(moved.stdout.contains("moved to \(server.url("/new.xml"))"), "\(moved.stdout)")
                #expect(moved.stdout.contains("1 new issue"), "\(moved.stdout)")
                subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["url"] as? String == server.url("/new.xml"))
                let show = try #require(try json(["show", "Episode 2"], lib) as? [String: Any])
                #expect(show["status"] as? String == "available", "sync downloaded the new issue")
            }
        }
    }

    @Test func theDailyPictureMappingOfTheReadme() async throws {
        let mapping = CommandRunner.packageRoot.appendingPathComponent("Samples/mappings/daily-picture.json")
        let api = """
            {"images": [
              {"startdate": "20170319", "urlbase": "/az/hprichbg/rb/TingSakura_ZH-CN14945610051",
               "copyright": "Sakura", "hsh": "c4afb61170efde716ed371c02f8db13f"},
              {"startdate": "20170318", "urlbase": "/az/hprichbg/rb/Harbour_ZH-CN1", "copyright": "Harbour",
               "hsh": "d4afb61170efde716ed371c02f8db13f"}
            ]}
            """
        try await withTestServer { server in
            server.serve("/HPImageArchive.aspx", bytes: Array(api.utf8), contentType: "application/json")
            server.serve("/az/hprichbg/rb/TingSakura_ZH-CN14945610051_1920x1080.jpg", bytes: patternBytes(count: 3000))
            server.serve("/az/hprichbg/rb/Harbour_ZH-CN1_1920x1080.jpg", bytes: patternBytes(count: 2000))
            try await withTemporaryDirectory { lib in
                let r = try run(
                    ["subscribe", server.url("/HPImageArchive.aspx") + "?format=js&idx=0&n=8", "--name", "Daily Picture",
                     "--map", mapping.path, "--initial", "all"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                let list = try #require(try json(["list"], lib) as? [[String: Any]])
                #expect(list.count == 2)
                let dates = list.compactMap { $0["date"] as? String }.sorted()
                #expect(dates == ["2017-03-18", "2017-03-19"])
                #expect(list.allSatisfy { $0["status"] as? String == "available" }, "\(list)")
                let newest = try #require(list.first { $0["date"] as? String == "2017-03-19" })
                let asset = try #require((newest["assets"] as? [[String: Any]])?.first)
                #expect(asset["url"] as? String == server.url("/az/hprichbg/rb/TingSakura_ZH-CN14945610051_1920x1080.jpg"))
                let subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["format"] as? String == "mapped")
                #expect(subscription["mapped"] as? Bool == true)
                #expect(try run(["sync"], lib).stdout.contains("unchanged"))
            }
        }
    }

    @Test func keepPrunesOldIssuesSparesPinnedOnesAndPrunedItemsStaySeen() async throws {
        try await withTestServer { server in
            for n in 1...5 { server.serve("/audio/ep\(n).mp3", bytes: patternBytes(count: 300 + n)) }
            server.serve("/feed.xml", bytes: Self.rss(episodes(server, 3)))
            try await withTemporaryDirectory { lib in
                let r = try run(["subscribe", server.url("/feed.xml"), "--initial", "all", "--keep", "2"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout.contains("pruned \"Episode 1\""), "\(r.stdout)")
                #expect(try issueNames(lib) == ["Episode 2", "Episode 3"])
                #expect(try run(["pin", "Episode 2"], lib).status == 0)
                server.serve("/feed.xml", bytes: Self.rss(episodes(server, 5)))
                let sync = try run(["sync"], lib)
                #expect(sync.status == 0, "\(sync.stderr)")
                // Keep 2 newest (4 and 5); 3 goes; 2 is pinned and stays.
                #expect(try issueNames(lib) == ["Episode 2", "Episode 4", "Episode 5"], "\(sync.stdout)")
                // The pruned items stay seen: a backfill-free sync never brings them back.
                server.serve("/feed.xml", bytes: Self.rss(episodes(server, 5), extra: "<description>v3</description>"))
                #expect(try run(["sync"], lib).status == 0)
                #expect(try issueNames(lib) == ["Episode 2", "Episode 4", "Episode 5"])
                let subscription = try #require((try json(["subscriptions"], lib) as? [[String: Any]])?.first)
                #expect(subscription["issues"] as? Int == 3)
                #expect(subscription["issuesAdded"] as? Int == 5)
                #expect(subscription["itemsSeen"] as? Int == 5)
            }
        }
    }

    @Test func aDamagedSubscriptionRecordFailsAloneAndVerifyNamesIt() async throws {
        try await withTestServer { server in
            server.serve("/a.xml", bytes: Self.rss([], title: "Feed A"))
            server.serve("/b.xml", bytes: Self.rss([], title: "Feed B"))
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/a.xml")], lib).status == 0)
                #expect(try run(["subscribe", server.url("/b.xml")], lib).status == 0)
                let folder = lib.appendingPathComponent(".catalog/subscriptions")
                let records = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
                let damaged = try #require(records.first)
                try Data("{\"id\": tru".utf8).write(to: folder.appendingPathComponent(damaged))
                try Data("{}".utf8).write(to: lib.appendingPathComponent(".sync/0000000000000000.json"))
                let sync = try run(["sync"], lib)
                #expect(sync.status == 1)
                #expect(sync.stderr.contains("not a valid subscription record"), "\(sync.stderr)")
                #expect(sync.stdout.contains(": unchanged"), "the other subscription is still synced: \(sync.stdout)")
                let verify = try run(["verify", "--repair"], lib)
                #expect(verify.status == 1, "a damaged record is not repaired: \(verify.stdout)")
                #expect(verify.stdout.contains(damaged), "\(verify.stdout)")
                #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent(".sync/0000000000000000.json").path))
                // The damaged record itself is never rewritten.
                #expect(try Data(contentsOf: folder.appendingPathComponent(damaged)) == Data("{\"id\": tru".utf8))
            }
        }
    }

    @Test func aBriefOutageIsRetriedAndALongOneFailsTheSubscriptionOnly() async throws {
        try await withTestServer { server in
            server.serve("/feed.xml", bytes: Self.rss([], title: "Flaky"))
            try await withTemporaryDirectory { lib in
                server.setFaults("/feed.xml", Faults(unavailableResponses: 2, retryAfter: "0"))
                let r = try run(["subscribe", server.url("/feed.xml")], lib)
                #expect(r.status == 0, "two 503s then the feed: \(r.stderr)")
                #expect(server.requestCount("/feed.xml") == 3)
                server.setFaults("/feed.xml", Faults(status: 500))
                let sync = try run(["sync"], lib)
                #expect(sync.status == 1)
                #expect(sync.stderr.contains("error: \"Flaky\"") && sync.stderr.contains("500"), "\(sync.stderr)")
                #expect(server.requestCount("/feed.xml") == 6, "three attempts, then give up")
            }
        }
    }
}
