import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Newsstand
import NewsstandServer
import NewsstandTestSupport
import Testing

/// `issues serve` over real HTTP: pages, escaping, the security model, files, the API and SSE.
@Suite(.timeLimit(.minutes(3)))
struct ServerTests {
    static let hostile = #"<script>alert(1)</script> <img src=x onerror=alert(2)> & "q""#

    /// A library with a hostile-named issue, a plain one with files, and a symbolic link out of its folder.
    static func prepare(_ library: Library) async throws {
        try await library.addIssue(named: hostile, date: IssueDate(year: 2026, month: 11, day: 20) ?? IssueDate(Date()), publication: "Evil <b>Press</b>")
        let plain = try await library.addIssue(named: "Daily Loop 2026-11-19", date: IssueDate(year: 2026, month: 11, day: 19) ?? IssueDate(Date()))
        let folder = library.contentURL(for: plain).path
        try FileManager.default.createDirectory(atPath: folder + "/pages", withIntermediateDirectories: true)
        try Data((0..<1000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: folder + "/pages/data.bin"))
        try Data("<p>hello</p>".utf8).write(to: URL(fileURLWithPath: folder + "/index.html"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/escape", withDestinationPath: "/etc")
        try FileManager.default.createSymbolicLink(atPath: folder + "/passwd", withDestinationPath: "/etc/passwd")
    }

    @Test func shelfRendersAndEscapesHostileTitles() async throws {
        try await withServer(prepare: Self.prepare) { served in
            let shelf = try await served.request(.GET, "/")
            #expect(shelf.status == 200)
            #expect(shelf.body.contains("Daily Loop 2026-11-19"))
            #expect(!shelf.body.contains("<script>alert"))
            #expect(!shelf.body.contains("<img src=x"))
            #expect(shelf.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(shelf.body.contains("Evil &lt;b&gt;Press&lt;/b&gt;"))
            let csp = shelf.headers.first(name: "Content-Security-Policy") ?? ""
            #expect(csp.hasPrefix("default-src 'none'"))
            #expect(csp.contains("script-src 'nonce-"))
            // The nonce is fresh per response.
            let again = try await served.request(.GET, "/")
            #expect(again.headers.first(name: "Content-Security-Policy") != csp)

            let key = try await served.library.key(of: Self.hostile, served: served)
            let page = try await served.request(.GET, "/issues/\(key)")
            #expect(page.status == 200)
            #expect(!page.body.contains("<script>alert"))
            #expect(!page.body.contains("onerror=alert(2)>"))
            let cover = try await served.request(.GET, "/covers/\(key)")
            #expect(cover.status == 200)
            #expect(cover.headers.first(name: "Content-Type") == "image/svg+xml")
            #expect(!cover.body.contains("<script>"))
            let script = try await served.request(.GET, "/static/app.js")
            #expect(script.bytes.count < 100_000)
        }
    }

    @Test(arguments: ["evil.example", "evil.example:8785", "127.0.0.1.evil.example", "localhost:1"])
    func foreignHostIsRefused(host: String) async throws {
        try await withServer { served in
            let answer = try await served.request(.GET, "/", headers: [("Host", host)])
            #expect(answer.status == 421)
            let api = try await served.request(.GET, "/api/issues", headers: [("Host", host)])
            #expect(api.status == 421)
            #expect(api.body.contains("\"error\""))
        }
    }

    /// Issue 46 item 9: a body past the 1 MiB a route reads is a 413 in the API's one error shape, not a 500
    /// carrying a Swift debug description; the same for a form page.
    @Test func anOversizedBodyIsA413InTheErrorShape() async throws {
        try await withServer { served in
            let token = try await served.csrfToken()
            let big = "{\"url\": \"" + String(repeating: "a", count: (1 << 20) + 10) + "\"}"
            let api = try await served.request(
                .POST, "/api/subscriptions",
                headers: [("Origin", served.origin), ("X-CSRF-Token", token), ("Content-Type", "application/json")], body: big)
            #expect(api.status == 413, "\(api.status) \(api.body.prefix(300))")
            #expect(api.body.contains("\"code\":\"http413\"") && api.body.contains("larger than 1 MiB"), "\(api.body.prefix(300))")
            #expect(!api.body.contains("NIOTooManyBytesError"))
            let form = try await served.request(
                .POST, "/subscriptions",
                headers: [("Origin", served.origin), ("Content-Type", "application/x-www-form-urlencoded")],
                body: "url=" + String(repeating: "b", count: (1 << 20) + 10) + "&csrf=\(token)")
            #expect(form.status == 413, "\(form.status) \(form.body.prefix(300))")
            #expect(!form.body.contains("NIOTooManyBytesError"))
        }
    }

    @Test func loopbackNamesAreAllowed() async throws {
        try await withServer { served in
            for host in ["localhost:\(served.port)", "[::1]:\(served.port)", "127.0.0.1:\(served.port)"] {
                let answer = try await served.request(.GET, "/", headers: [("Host", host)])
                #expect(answer.status == 200, "\(host)")
            }
        }
    }

    @Test func crossOriginAndTokenlessChangesAreRefused() async throws {
        try await withServer(prepare: Self.prepare) { served in
            let key = try await served.library.key(of: "Daily Loop 2026-11-19", served: served)
            let token = try await served.csrfToken()
            // Another site's page posting with the right token.
            let crossSite = try await served.request(
                .POST, "/issues/\(key)/pin",
                headers: [("Origin", "http://evil.example"), ("Content-Type", "application/x-www-form-urlencoded")],
                body: "csrf=\(token)")
            #expect(crossSite.status == 403)
            // Same origin, no token.
            let missing = try await served.request(
                .POST, "/issues/\(key)/pin",
                headers: [("Origin", served.origin), ("Content-Type", "application/x-www-form-urlencoded")], body: "")
            #expect(missing.status == 403)
            // Neither Origin nor Referer.
            let bare = try await served.request(.POST, "/api/issues/\(key)/pin", headers: [("X-CSRF-Token", token)])
            #expect(bare.status == 403)
            #expect(try await served.library.issue(named: "Daily Loop 2026-11-19")?.isPinned == false)
            // The page's own form: pinned.
            let good = try await served.post("/issues/\(key)/pin")
            #expect(good.status == 303)
            #expect(try await served.library.issue(named: "Daily Loop 2026-11-19")?.isPinned == true)
            // The API with the header.
            let unpin = try await served.post("/api/issues/\(key)/unpin", api: true)
            #expect(unpin.status == 200)
            #expect(try await served.library.issue(named: "Daily Loop 2026-11-19")?.isPinned == false)
        }
    }

    @Test(arguments: [
        "/pages/..%2f..%2fpasswd", "/..%2f..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd", "/pages/%2e%2e%2f%2e%2e%2fx",
        "/escape/passwd", "/passwd", "/pages%2fdata.bin", "/%00", "/pages/../../../../etc/passwd",
    ])
    func traversalIsRefused(suffix: String) async throws {
        try await withServer(prepare: Self.prepare) { served in
            let key = try await served.library.key(of: "Daily Loop 2026-11-19", served: served)
            let answer = try await served.request(.GET, "/files/\(key)\(suffix)")
            #expect(answer.status == 404 || answer.status == 400, "\(suffix) answered \(answer.status)")
            #expect(!answer.body.contains("root:"))
        }
    }

    @Test func filesHaveRangeETagAndConditionalAnswers() async throws {
        try await withServer(prepare: Self.prepare) { served in
            let key = try await served.library.key(of: "Daily Loop 2026-11-19", served: served)
            let whole = try await served.request(.GET, "/files/\(key)/pages/data.bin")
            #expect(whole.status == 200)
            #expect(whole.bytes.count == 1000)
            #expect(whole.headers.first(name: "Accept-Ranges") == "bytes")
            let etag = try #require(whole.headers.first(name: "ETag"))
            let part = try await served.request(.GET, "/files/\(key)/pages/data.bin", headers: [("Range", "bytes=100-199")])
            #expect(part.status == 206)
            #expect(part.bytes == Array(whole.bytes[100...199]))
            #expect(part.headers.first(name: "Content-Range") == "bytes 100-199/1000")
            let suffix = try await served.request(.GET, "/files/\(key)/pages/data.bin", headers: [("Range", "bytes=-10")])
            #expect(suffix.bytes == Array(whole.bytes[990...]))
            let beyond = try await served.request(.GET, "/files/\(key)/pages/data.bin", headers: [("Range", "bytes=5000-")])
            #expect(beyond.status == 416)
            #expect(beyond.headers.first(name: "Content-Range") == "bytes */1000")
            let cached = try await served.request(.GET, "/files/\(key)/pages/data.bin", headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.bytes.isEmpty)
            let stale = try await served.request(
                .GET, "/files/\(key)/pages/data.bin", headers: [("Range", "bytes=0-9"), ("If-Range", "\"other\"")])
            #expect(stale.status == 200)
            let html = try await served.request(.GET, "/files/\(key)/index.html")
            #expect(html.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
            #expect(html.headers.first(name: "Content-Security-Policy")?.hasPrefix("sandbox") == true)
        }
    }

    @Test func apiAnswersWithETagsAnd304() async throws {
        try await withServer(prepare: Self.prepare) { served in
            let list = try await served.request(.GET, "/api/issues?limit=1")
            #expect(list.status == 200)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(list.bytes)) as? [String: Any])
            #expect(object["total"] as? Int == 2)
            #expect((object["items"] as? [Any])?.count == 1)
            let etag = try #require(list.headers.first(name: "ETag"))
            #expect(try await served.request(.GET, "/api/issues?limit=1", headers: [("If-None-Match", etag)]).status == 304)
            let bad = try await served.request(.GET, "/api/issues?limit=0")
            #expect(bad.status == 400)
            #expect(bad.body.contains("\"message\":\"limit must be"))
            let missing = try await served.request(.GET, "/api/issues/0123456789abcdef0123456789abcdef")
            #expect(missing.status == 404)
            #expect(missing.body.contains("\"code\":\"issueNotFound\""))
        }
    }

    @Test func readStateFollowsOpeningAndTheAPI() async throws {
        try await withServer(prepare: Self.prepare) { served in
            let key = try await served.library.key(of: "Daily Loop 2026-11-19", served: served)
            #expect(try await served.request(.GET, "/api/issues?status=new").body.contains("Daily Loop"))
            _ = try await served.request(.GET, "/issues/\(key)")
            #expect(try served.library.readIssueNames().contains("Daily Loop 2026-11-19"))
            #expect(try await !served.request(.GET, "/api/issues?status=new").body.contains("Daily Loop"))
            #expect(try await served.post("/api/issues/\(key)/unread", api: true).status == 200)
            #expect(try await served.request(.GET, "/api/issues?status=new").body.contains("Daily Loop"))
        }
    }

    @Test func feedsOutCarryEnclosures() async throws {
        try await withServer(prepare: Self.prepare) { served in
            let opds = try await served.request(.GET, "/opds")
            #expect(opds.status == 200)
            #expect(opds.body.contains("http://opds-spec.org/acquisition"))
            #expect(!opds.body.contains("<script>"))
            let rss = try await served.request(.GET, "/feeds/publications/Daily%20Loop.rss")
            #expect(rss.status == 200)
            #expect(rss.body.contains("<enclosure url=\"http://127.0.0.1:\(served.port)/files/"))
            #expect(rss.body.contains("length=\""))
            #expect(rss.body.contains("<guid isPermaLink=\"false\">"))
            #expect(rss.body.contains("<pubDate>Thu, 19 Nov 2026 00:00:00 GMT</pubDate>"))
        }
    }

    @Test func serverSentEventsDeliverACommittedEvent() async throws {
        try await withServer { served in
            var request = HTTPClientRequest(url: served.base + "/events")
            request.headers.add(name: "Accept", value: "text/event-stream")
            let response = try await served.client.execute(request, timeout: .seconds(60))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true)
            var received = ""
            var latency: Duration?
            let clock = ContinuousClock()
            var committed: ContinuousClock.Instant?
            for try await chunk in response.body {
                received += String(buffer: chunk)
                if committed == nil, received.contains("retry:") {
                    try await served.library.addIssue(named: "Live <b>one</b>", date: IssueDate(Date()))
                    committed = clock.now  // the commit (and its event) is durable once addIssue returns
                }
                if let committed, received.contains("event: issue.added") {
                    latency = clock.now - committed
                    break
                }
            }
            #expect(received.contains("Live <b>one</b>") || received.contains("Live \\u003cb"))
            let measured = try #require(latency)
            print("event → SSE client latency: \(measured)")
            // The target is 250 ms (bench/serve.py measures it); on a loaded CI machine the test asks for less.
            #expect(measured < .seconds(2))
        }
    }

    @Test func lastEventIDResumesTheStream() async throws {
        try await withServer(prepare: Self.prepare) { served in
            // Two issues were added before the browser connected; it last saw the first event.
            let log = try await served.request(.GET, "/api/events?since=0")
            let object = try JSONSerialization.jsonObject(with: Data(log.bytes)) as? [String: Any]
            let cursors = (object?["events"] as? [[String: Any]] ?? []).compactMap { $0["cursor"] as? Int }
            try #require(cursors.count == 2)
            var request = HTTPClientRequest(url: served.base + "/events")
            request.headers.add(name: "Last-Event-ID", value: String(cursors[0]))
            let response = try await served.client.execute(request, timeout: .seconds(30))
            var received = ""
            for try await chunk in response.body {
                received += String(buffer: chunk)
                if received.contains("id: \(cursors[1])\n") { break }
            }
            #expect(!received.contains("id: \(cursors[0])\n"))
            #expect(received.contains("id: \(cursors[1])\nevent: issue.added\n"))
            #expect(received.contains("Daily Loop 2026-11-19"))
        }
    }

    /// A client that reads nothing while 3,000 issues are imported: its stream is never thinned. What it gets is
    /// every event in order up to where the server ended the stream, and reconnecting with `Last-Event-ID` (as a
    /// browser does) gives it the rest: no cursor is missing. Without the fix the stream dropped the oldest
    /// buffered frames and the ids jumped.
    @Test func aClientThatCannotKeepUpMissesNoEventAfterReconnecting() async throws {
        try await withServer { served in
            let since = try await served.library.lastEventCursor()
            let socket = try RawHTTPClient(port: served.port, path: "/events?since=\(since)")
            // Headers and the first frame: the stream is live before the burst.
            _ = try socket.read(until: "retry: 2000")
            let items = (0..<3_000).map { #"{"name":"Burst \#($0)","date":"2026-11-20"}"# }.joined(separator: "\n")
            let report = try await served.library.importIssues(from: Data(items.utf8), source: "burst")
            #expect(report.added.count == 3_000)
            let last = try await served.library.lastEventCursor()
            var seen = try socket.readEvents(until: last)
            var reconnects = 0
            while seen.last.map({ $0 < last }) ?? true, reconnects < 100 {
                reconnects += 1
                let resumed = try RawHTTPClient(
                    port: served.port, path: "/events", headers: ["Last-Event-ID: \(seen.last ?? since)"])
                seen += try resumed.readEvents(until: last)
            }
            let missing = Set((since + 1)...last).subtracting(seen).count
            #expect(seen == Array((since + 1)...last), "\(seen.count) ids, \(missing) missing, \(reconnects) reconnects")
            print("3,000-issue burst to a client reading nothing: \(reconnects) reconnect(s)")
        }
    }

    @Test func tokenIsNeededBeyondLoopback() async throws {
        // 0.0.0.0 binds every address; the request still comes over loopback, but the server asks for the token.
        try await withServer(host: "0.0.0.0") { served in
            let page = try await served.request(.GET, "/")
            #expect(page.status == 303)
            #expect(page.headers.first(name: "Location") == "/login")
            let api = try await served.request(.GET, "/api/issues")
            #expect(api.status == 401)
            let token = try String(contentsOfFile: served.library.rootURL.path + "/.serve-token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let attributes = try FileManager.default.attributesOfItem(atPath: served.library.rootURL.path + "/.serve-token")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let authorised = try await served.request(.GET, "/api/issues", headers: [("Authorization", "Bearer \(token)")])
            #expect(authorised.status == 200)
            let wrong = try await served.request(.GET, "/api/issues", headers: [("Authorization", "Bearer nope")])
            #expect(wrong.status == 401)
            // Feed readers: a Basic challenge instead of the login page, and the token as the password.
            let challenged = try await served.request(.GET, "/opds")
            #expect(challenged.status == 401)
            #expect(challenged.headers.first(name: "WWW-Authenticate")?.hasPrefix("Basic ") == true)
            func basic(_ user: String, _ password: String) -> (String, String) {
                ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
            }
            #expect(try await served.request(.GET, "/opds", headers: [basic("reader", token)]).status == 200)
            #expect(try await served.request(.GET, "/opds", headers: [basic("reader", "nope")]).status == 401)
            #expect(try await served.request(.GET, "/opds", headers: [basic(token, "")]).status == 401)
            #expect(try await served.request(.GET, "/api/issues", headers: [basic("", token)]).status == 200)
        }
    }

    /// The subscriptions page says when and why each feed is checked next, and its configure form changes what
    /// `issues configure` changes: empty fields go back to the defaults, a bad span is refused.
    @Test func subscriptionsPageShowsTheNextCheckAndConfigures() async throws {
        try await withTestServer { feeds in
            let items = (1...3).map { n in
                "<item><title>Ep \(n)</title><guid>ep\(n)</guid><pubDate>\(20 + n) Nov 2026 10:00:00 GMT</pubDate>"
                    + "<enclosure url=\"\(feeds.url("/ep\(n).mp3"))\" type=\"audio/mpeg\" length=\"10\"/></item>"
            }.joined()
            feeds.serve(
                "/feed.xml", bytes: Array("<rss version=\"2.0\"><channel><title>Loop Cast</title>\(items)</channel></rss>".utf8))
            try await withServer(prepare: { library in
                let url = try #require(URL(string: feeds.url("/feed.xml")))
                _ = try await library.subscribe(to: url, options: SubscribeOptions(initial: .all))
            }) { served in
                let page = try await served.request(.GET, "/subscriptions")
                #expect(page.status == 200)
                #expect(page.body.contains("next check: in "), "\(page.body)")
                #expect(page.body.contains("action=\"/subscriptions/"), "a configure form")
                let id = try #require(try await served.library.subscriptions().first?.id)

                var saved = try await served.post(
                    "/subscriptions/\(id)/configure", form: "name=Loop%20Show&keep=2&every=6h&template=&download=1")
                #expect(saved.status == 303, "\(saved.body)")
                var subscription = try #require(try await served.library.subscriptions().first)
                #expect(subscription.name == "Loop Show" && subscription.keep == 2 && subscription.checkEvery == .seconds(6 * 3600))
                #expect(subscription.downloadsAutomatically)
                #expect(try await served.library.issues().count == 2, "the new keep pruned at once")
                let shown = try await served.request(.GET, "/subscriptions")
                #expect(shown.body.contains("every 6h (configured)"), "\(shown.body)")

                saved = try await served.post("/subscriptions/\(id)/configure", form: "name=Loop%20Show&keep=&every=&template=")
                #expect(saved.status == 303)
                subscription = try #require(try await served.library.subscriptions().first)
                #expect(subscription.keep == nil && subscription.checkEvery == nil && !subscription.downloadsAutomatically)

                let refused = try await served.post("/subscriptions/\(id)/configure", form: "name=X&every=6")
                #expect(refused.status == 400, "\(refused.body)")
                let badTemplate = try await served.post("/subscriptions/\(id)/configure", form: "name=X&template=..%2Fx")
                #expect(badTemplate.status == 400, "\(badTemplate.body)")
                #expect(try await served.library.subscriptions().first?.name == "Loop Show", "nothing changed")
            }
        }
    }
}
