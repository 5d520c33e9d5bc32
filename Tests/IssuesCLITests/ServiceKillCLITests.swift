import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The service under the faults a machine deals it: killed with SIGKILL at random points of its life
/// (starting, checking a feed, merging, downloading, recording), and running beside a second start and
/// manual `issues sync`s of the same feed. No item may be lost or added twice, and no asset fetched twice.
///
/// `ISSUES_SERVICE_KILLS` sets how many kills (`make test`: 6; `make schedule-week`: 50), `ISSUES_KILL_SEED`
/// the seed of their timing (printed, so that a failure can be repeated).
@Suite(.timeLimit(.minutes(10))) struct ServiceKillCLITests {
    static let assetSize = 300_000

    func run(_ args: [String], _ library: URL) throws -> CommandResult {
        try CommandRunner.issues(args, library: library)
    }

    func startService(_ library: URL) throws -> RunningCommand {
        try CommandRunner.start(
            CommandRunner.issuesBinary, ["serve", "--no-http", "--library", library.path],
            environment: CommandRunner.environment())
    }

    /// A feed of `names`, newest first, one MP3 each on `server`.
    func feed(_ server: TestHTTPServer, _ names: [String]) -> [UInt8] {
        let items = names.enumerated().map { index, name in
            let day = 28 - index % 27
            return SubscriptionCLITests.Episode(
                guid: name, title: name, date: "\(day) Nov 2026 \(10 + index / 27):00:00 GMT",
                url: server.url("/\(name).mp3"))
        }
        return SubscriptionCLITests.rss(items, title: "Kill Cast")
    }

    /// Forgets every subscription's last check, so the next start (or reload) checks each at once.
    func makeDue(_ library: URL) throws {
        let folder = library.appendingPathComponent(".sync")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".json") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// Every issue is listed once, available, with the bytes the server has; `verify` finds nothing to repair.
    func expectWhole(_ library: URL, names: [String], server: TestHTTPServer) throws {
        let listed = try run(["list", "--json"], library)
        #expect(listed.status == 0, "\(listed.stderr)")
        for name in names {
            #expect(listed.stdout.components(separatedBy: "\"name\":\"\(name)\"").count == 2, "\(name) listed once")
            let shown = try run(["show", "--json", name], library)
            #expect(shown.stdout.contains("\"status\":\"available\""), "\(name): \(shown.stdout)")
            let folder = try run(["path", name], library).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let bytes = FileManager.default.contents(atPath: folder + "/\(name).mp3").map { [UInt8]($0) }
            #expect(bytes == patternBytes(count: Self.assetSize), "\(name)'s bytes")
        }
        let verified = try run(["verify"], library)
        #expect(verified.status == 0, "verify: \(verified.stdout)\(verified.stderr)")
    }

    @Test(.slow) func killedAtRandomPointsTheServiceLosesNoItemAndFetchesNoAssetTwice() async throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = environment["ISSUES_SERVICE_KILLS"].flatMap(Int.init) ?? 6
        let seed = environment["ISSUES_KILL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("ServiceKillCLITests: \(kills) kills, ISSUES_KILL_SEED=\(seed)")
        var rng = SeededGenerator(state: seed)
        // The feed gains a batch of items five times over the kills, so that kills keep landing in checks,
        // merges and downloads rather than in an idle service.
        let batches = (1...5).map { batch in (1...4).map { "Batch \(batch)-\($0)" } }
        let all = batches.flatMap { $0 }
        try await withTestServer { server in
            for name in all + ["Old"] {
                server.serve("/\(name).mp3", bytes: patternBytes(count: Self.assetSize), contentType: "audio/mpeg")
                // About 0.4 s a file: long enough for kills to land inside transfers.
                server.setFaults("/\(name).mp3", Faults(bytesPerSecond: 750_000))
            }
            server.serve("/feed.xml", bytes: feed(server, ["Old"]))
            try await withTemporaryDirectory { folder in
                let library = folder.appendingPathComponent("library")
                let r = try run(["subscribe", "--initial", "0", server.url("/feed.xml")], library)
                #expect(r.status == 0, "\(r.stderr)")
                var published = 0
                func publish(upTo count: Int) throws {
                    guard count > published else { return }
                    published = count
                    server.serve("/feed.xml", bytes: feed(server, batches.prefix(count).reversed().flatMap { $0 } + ["Old"]))
                    try makeDue(library)
                }
                for kill in 0..<kills {
                    try publish(upTo: 1 + kill * batches.count / max(1, kills))
                    let service = try startService(library)
                    try await Task.sleep(for: .milliseconds(Int.random(in: 20...1500, using: &rng)))
                    service.send(SIGKILL)
                    _ = try await service.wait(timeout: .seconds(20))
                }
                try publish(upTo: batches.count)

                let last = try startService(library)
                do {
                    try await waitUntil("every issue downloaded", timeout: .seconds(180)) {
                        let listed = (try? run(["list", "--json"], library))?.stdout ?? ""
                        return listed.components(separatedBy: "\"status\":\"available\"").count
                            == all.count + 1
                    }
                } catch {
                    let listed = (try? run(["list"], library))?.stdout ?? ""
                    Issue.record("seed \(seed): \(error)\n\(listed)\n\(last.stderrSoFar)")
                    last.send(SIGKILL)
                    throw error
                }
                // As systemd does (Type=notify), the stop comes once the service is up; a stop during the start
                // also ends with 0, but a signal before `serve` runs its first line meets the default action.
                try await waitUntil("the service started", timeout: .seconds(60)) {
                    last.stderrSoFar.contains("scheduler started")
                }
                last.send(SIGTERM)
                let stopped = try await last.wait(timeout: .seconds(30))
                #expect(stopped.status == 0, "\(stopped.stderr)")
                try expectWhole(library, names: all, server: server)
                #expect(try run(["show", "Old"], library).status != 0, "the item remembered at subscribe is not added")
                // A kill loses what was in flight (not yet on disk), never a whole file already fetched.
                var refetched = 0
                for name in all {
                    let sent = server.bodyBytesSent("/\(name).mp3")
                    #expect(sent >= Self.assetSize && sent < 2 * Self.assetSize, "\(name): \(sent) bytes sent")
                    refetched += sent - Self.assetSize
                }
                #expect(refetched <= kills * 256 * 1024, "\(refetched) bytes fetched again over \(kills) kills (seed \(seed))")
                print("ServiceKillCLITests: \(refetched) bytes fetched again over \(kills) kills")
            }
        }
    }

    /// One service, a second start refused, and three manual syncs of the same feed, all at once: every item
    /// is added once and every asset fetched once.
    @Test(.slow) func aServiceASecondStartAndManualSyncsAtOnceAddEveryItemOnce() async throws {
        let names = (1...12).map { "Item \($0)" }
        try await withTestServer { server in
            for name in names + ["Old"] {
                server.serve("/\(name).mp3", bytes: patternBytes(count: Self.assetSize), contentType: "audio/mpeg")
            }
            server.serve("/feed.xml", bytes: feed(server, ["Old"]))
            try await withTemporaryDirectory { folder in
                let library = folder.appendingPathComponent("library")
                var r = try run(["subscribe", "--initial", "0", server.url("/feed.xml")], library)
                #expect(r.status == 0, "\(r.stderr)")
                server.serve("/feed.xml", bytes: feed(server, names + ["Old"]))
                try makeDue(library)

                let service = try startService(library)
                try await waitUntil("the service started", timeout: .seconds(30)) {
                    service.stderrSoFar.contains("scheduler started")
                }
                let second = try startService(library)
                let syncs = try (0..<3).map { _ in
                    try CommandRunner.start(
                        CommandRunner.issuesBinary, ["sync", "--library", library.path], environment: CommandRunner.environment())
                }
                let refused: CommandResult
                do {
                    refused = try await second.wait(timeout: .seconds(30))
                } catch {
                    Issue.record("the second start: \(second.stderrSoFar)\nthe first: \(service.stderrSoFar)")
                    second.send(SIGKILL)
                    throw error
                }
                #expect(refused.status == 1 && refused.stderr.contains("PID \(service.pid)"), "\(refused.stderr)")
                for sync in syncs {
                    let done = try await sync.wait(timeout: .seconds(120))
                    #expect(done.status == 0, "\(done.stderr)")
                }
                try await waitUntil("every issue downloaded", timeout: .seconds(120)) {
                    let listed = (try? run(["list", "--json"], library))?.stdout ?? ""
                    return listed.components(separatedBy: "\"status\":\"available\"").count == names.count + 1
                }
                service.send(SIGTERM)
                let stopped = try await service.wait(timeout: .seconds(30))
                #expect(stopped.status == 0, "\(stopped.stderr)")
                try expectWhole(library, names: names, server: server)
                for name in names {
                    #expect(server.bodyBytesSent("/\(name).mp3") == Self.assetSize, "\(name) fetched once")
                }
                r = try run(["list"], library)
                #expect(r.status == 0)
            }
        }
    }
}
