import Foundation
import Logging
import Newsstand
import NewsstandCore
import NewsstandService
import NewsstandSubscriptions
import NewsstandTestSupport
import Synchronization
import Testing

/// A week of the scheduler in seconds: real feeds on loopback servers, a simulated clock. Feeds publish at
/// different rates, some give a `ttl` or `Cache-Control`, some fail (404, or 503 with `Retry-After`), one
/// goes (410), some are paused. Every check must start within 10 % of the interval its plan chose, paused
/// and gone feeds are never fetched, and no origin ever has more than 2 requests at a time or two starts
/// less than a second apart. `ISSUES_SCHEDULE_FEEDS` sets the number of feeds (100 here; `make
/// schedule-week` runs 1,000).
@Suite(.timeLimit(.minutes(30))) struct SimulatedWeekTests {
    struct Kind {
        var perWeek: Int
        var ttl: Int? = nil
        var maxAge: Int? = nil
        var failing: Faults? = nil
        var paused = false
        var gone = false
    }

    /// The mix, by feed number: mostly healthy feeds at different rates, with every special case present.
    static func kind(_ n: Int) -> Kind {
        switch n % 20 {
        case 0: return Kind(perWeek: 200, ttl: 120)  // every 50 min by rate, 2 h by ttl
        case 1: return Kind(perWeek: 200, maxAge: 3 * 3600)  // the server's Cache-Control holds it to 3 h
        case 2: return Kind(perWeek: 7, failing: Faults(status: 404))
        case 3: return Kind(perWeek: 28, failing: Faults(unavailableResponses: 2, retryAfter: "7200"))
        case 4: return Kind(perWeek: 7, paused: true)
        case 5: return Kind(perWeek: 14, gone: n == 5)
        default: return Kind(perWeek: [1, 3, 7, 14, 28, 56][n % 6])
        }
    }

    static func feed(_ n: Int, kind: Kind, server: TestHTTPServer, now: Date) -> [UInt8] {
        let count = kind.perWeek * 4
        let items = (0..<count).map { i -> String in
            let date = now - Double(i) * 28 * 86_400 / Double(count) - 60
            let stamp = date.formatted(.iso8601)
            return """
                <entry><id>feed-\(n)-item-\(i)</id><title>Feed \(n) item \(i)</title><updated>\(stamp)</updated>\
                <link rel="enclosure" href="\(server.url("/media/\(n)/\(i).mp3"))" type="audio/mpeg"/></entry>
                """
        }
        let ttl = kind.ttl.map { "<ttl>\($0)</ttl>" } ?? ""
        if kind.ttl != nil {
            // RSS carries the ttl.
            let rssItems = (0..<count).map { i -> String in
                let date = now - Double(i) * 28 * 86_400 / Double(count) - 60
                return """
                    <item><guid>feed-\(n)-item-\(i)</guid><title>Feed \(n) item \(i)</title>\
                    <pubDate>\(HTTPDate.format(Int64(date.timeIntervalSince1970)))</pubDate>\
                    <enclosure url="\(server.url("/media/\(n)/\(i).mp3"))" type="audio/mpeg" length="1"/></item>
                    """
            }
            return Array("<rss version=\"2.0\"><channel><title>Feed \(n)</title>\(ttl)\(rssItems.joined())</channel></rss>".utf8)
        }
        return Array(
            "<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>Feed \(n)</title>\(items.joined())</feed>".utf8)
    }

    struct Start: Sendable {
        var subscription: String
        var origin: String
        var due: Date
        var at: Date
    }

    final class Record: Sendable {
        let starts = Mutex<[Start]>([])
        let plans = Mutex<[String: CheckPlan]>([:])
        let inFlight = Mutex<[String: Int]>([:])
        let overLimit = Mutex(0)
        let lastCheckAt = Mutex<[String: Date]>([:])
        /// Each subscription's origin, from its checks' starts: a lookup per finish, not a scan of every start.
        let origins = Mutex<[String: String]>([:])
        let late = Mutex<[String]>([])
        let checks = Mutex(0)
        let reasons = Mutex<Set<CheckPlan.Reason>>([])
    }

    @Test(.slow) func aSimulatedWeekKeepsEveryFeedOnItsPlanAndEveryHostUnderItsLimit() async throws {
        let feeds = ProcessInfo.processInfo.environment["ISSUES_SCHEDULE_FEEDS"].flatMap(Int.init) ?? 100
        let serverCount = max(2, feeds / 100)
        var servers: [TestHTTPServer] = []
        for _ in 0..<serverCount { servers.append(try await TestHTTPServer.start()) }
        defer { Task { [servers] in for server in servers { try? await server.shutdown() } } }
        let start = Date()
        try await withTemporaryDirectory { root in
            var configuration = Library.Configuration()
            configuration.syncDownloads = false
            var logger = Logger(label: "simulated-week")
            logger.logLevel = .warning  // a line per request would be most of the run's time
            try await Library.withLibrary(at: root, configuration: configuration, logger: logger) { library in
                var paths: [String: (server: TestHTTPServer, path: String, kind: Kind)] = [:]
                for n in 0..<feeds {
                    let server = servers[n % serverCount]
                    let kind = Self.kind(n)
                    let path = "/feeds/\(n).xml"
                    server.serve(path, bytes: Self.feed(n, kind: kind, server: server, now: start))
                    if let maxAge = kind.maxAge {
                        var faults = Faults()
                        faults.extraHeaders = ["Cache-Control": "max-age=\(maxAge)"]
                        server.setFaults(path, faults)
                    }
                    let url = try #require(URL(string: server.url(path)))
                    let report = try await library.subscribe(
                        to: url, options: SubscribeOptions(name: "Feed \(n)", initial: .newest(0), downloadsAutomatically: false))
                    #expect(report.addedIssues.isEmpty)
                    if kind.paused { try await library.changeSubscription(named: "Feed \(n)", SubscriptionChange(isPaused: true)) }
                    if let failing = kind.failing { server.setFaults(path, failing) }
                    if kind.gone { server.setFaults(path, Faults(status: 410)) }
                    paths["Feed \(n)"] = (server, path, kind)
                }
                for server in servers { server.resetCounters() }

                let clock = SimulatedClock(start: Date())
                let begin = clock.now()
                let end = begin + 7 * 86_400
                let record = Record()
                let scheduler = Scheduler(library: library, clock: clock) { event in
                    switch event {
                    case .checking(let name, let origin, let due, let at):
                        record.starts.withLock { $0.append(Start(subscription: name, origin: origin, due: due, at: at)) }
                        record.inFlight.withLock {
                            $0[origin, default: 0] += 1
                            if $0[origin, default: 0] > 2 { record.overLimit.withLock { $0 += 1 } }
                        }
                        // Late by more than a tenth of the interval its plan chose (from its last check).
                        if let last = record.lastCheckAt.withLock({ $0[name] }), due > last,
                            at.timeIntervalSince(due) > 0.1 * due.timeIntervalSince(last)
                        {
                            record.late.withLock { $0.append("\(name): due \(due), started \(at), last \(last)") }
                        }
                        record.lastCheckAt.withLock { $0[name] = at }
                        record.origins.withLock { $0[name] = origin }
                    case .checked(let name, _, let next):
                        record.checks.withLock { $0 += 1 }
                        if let next {
                            record.plans.withLock { $0[name] = next }
                            record.reasons.withLock { _ = $0.insert(next.reason) }
                        }
                        let origin = record.origins.withLock { $0[name] } ?? ""
                        record.inFlight.withLock { $0[origin, default: 1] -= 1 }
                    default: break
                    }
                }
                let run = Task { try await scheduler.run() }
                while clock.now() < end {
                    try await Task.sleep(for: .milliseconds(20))
                }
                run.cancel()
                _ = try? await run.value

                let starts = record.starts.withLock { $0 }
                #expect(record.overLimit.withLock { $0 } == 0)
                // Starts at one origin at least a second apart.
                var lastByOrigin: [String: Date] = [:]
                var tooClose = 0
                for start in starts.sorted(by: { $0.at < $1.at }) {
                    if let last = lastByOrigin[start.origin], start.at.timeIntervalSince(last) < 1 { tooClose += 1 }
                    lastByOrigin[start.origin] = start.at
                }
                #expect(tooClose == 0)
                let late = record.late.withLock { $0 }
                #expect(late.isEmpty, "\(late.prefix(5))")
                // Paused feeds were never fetched; the gone one once (its 410) and then never.
                for (name, feed) in paths {
                    let requests = feed.server.requestCount(feed.path)
                    if feed.kind.paused { #expect(requests == 0, "\(name) was fetched while paused") }
                    if feed.kind.gone { #expect(requests == 1, "\(name) was fetched \(requests) times after it was gone") }
                }
                // Each healthy feed was checked about as often as its interval allows over the week.
                let counts = Dictionary(grouping: starts, by: \.subscription).mapValues(\.count)
                for (name, feed) in paths where feed.kind.failing == nil && !feed.kind.paused && !feed.kind.gone {
                    let interval: Double
                    if let ttl = feed.kind.ttl {
                        interval = Double(ttl * 60)
                    } else if let maxAge = feed.kind.maxAge {
                        interval = max(Double(maxAge), min(max(7 * 86_400 / Double(feed.kind.perWeek), 900), 86_400))
                    } else {
                        interval = min(max(7 * 86_400 / Double(feed.kind.perWeek), 900), 86_400)
                    }
                    let expected = 7 * 86_400 / interval
                    let seen = Double(counts[name, default: 0])
                    #expect(seen >= expected * 0.85 && seen <= expected * 1.15 + 1, "\(name): \(seen) checks, expected about \(expected)")
                }
                // A failing feed backs off: far fewer checks than its rate, and never silently dropped.
                for (name, feed) in paths where feed.kind.failing?.status == 404 {
                    let seen = counts[name, default: 0]
                    #expect(seen >= 7 && seen <= 20, "\(name): \(seen) checks while failing")
                    #expect(record.plans.withLock { $0[name] }?.reason == .backoff)
                }
                let schedule = try await library.schedule(now: clock.now())
                #expect(schedule.filter { $0.plan.reason == .paused }.count == paths.values.filter { $0.kind.paused }.count)
                #expect(schedule.contains { $0.plan.reason == .gone })
                // Every reason a check can be due for came up during the week.
                #expect(record.reasons.withLock { $0 }.isSuperset(of: [.adaptive, .ttl, .serverAsked, .backoff]))
                print("simulated week: \(feeds) feeds, \(record.checks.withLock { $0 }) checks, \(starts.count) starts")
            }
        }
    }
}
