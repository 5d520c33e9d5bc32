import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The event log, `issues events`, and hooks, through real `issues` processes: kill -9 between a change's
/// commit and its delivery, hostile names reaching a hook as data, a webhook that fails once, `--follow`
/// across processes, and a hook that never ends.
@Suite(.timeLimit(.minutes(5))) struct EventCLITests {
    func run(_ args: [String], _ lib: URL, crashAt point: String? = nil) throws -> CommandResult {
        try CommandRunner.issues(args, library: lib, environment: point.map { ["ISSUES_CRASH_AT": $0] } ?? [:])
    }

    /// The events `issues events --json` prints.
    func events(_ lib: URL) throws -> [[String: Any]] {
        let r = try run(["events", "--json"], lib)
        #expect(r.status == 0, "\(r.stderr)")
        return try r.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func writeHooks(_ lib: URL, _ hooks: [[String: Any]]) throws {
        try FileManager.default.createDirectory(at: lib, withIntermediateDirectories: true)
        let data = try JSONSerialization.data(withJSONObject: ["hooks": hooks], options: [.sortedKeys])
        try data.write(to: lib.appendingPathComponent("config.json"))
    }

    /// The JSON lines a `tee -a FILE` hook received.
    func received(_ file: URL) throws -> [[String: Any]] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func eachChangeIsLoggedWithItsKindCursorAndIdentity() async throws {
        try await withTemporaryDirectory { lib in
            #expect(try run(["add", "The Daily 2026-11-20", "--date", "2026-11-20"], lib).status == 0)
            #expect(try run(["add", "Other", "--date", "2026-11-21"], lib).status == 0)
            #expect(try run(["remove", "Other"], lib).status == 0)
            let all = try events(lib)
            #expect(all.map { $0["kind"] as? String } == ["issue.added", "issue.added", "issue.removed"])
            let cursors = all.compactMap { $0["cursor"] as? Int }
            #expect(cursors == cursors.sorted() && Set(cursors).count == 3)
            #expect(Set(all.compactMap { $0["id"] as? String }).count == 3)
            #expect(all[2]["reason"] as? String == "remove")
            let issue = try #require(all[0]["issue"] as? [String: Any])
            #expect(issue["name"] as? String == "The Daily 2026-11-20")
            #expect(issue["date"] as? String == "2026-11-20")
            #expect(all[0]["reportVersion"] as? Int == 1)
            // --since gives only what came after.
            let since = try run(["events", "--json", "--since", String(cursors[1])], lib)
            #expect(since.stdout.split(separator: "\n").count == 1)
            let text = try run(["events"], lib)
            #expect(text.stdout.contains("issue.removed  Other  (remove)"), "\(text.stdout)")
        }
    }

    /// kill -9 at each instant between a change's commit and its hook's acknowledgement; then one delivery
    /// run: every event of a change in the catalog reached the hook exactly once, none of a lost change did.
    @Test(arguments: ["catalog-transaction", "catalog-committed", "hook-delivering", "hook-acknowledged"])
    func aKillBetweenCommitAndDeliveryLosesAndRepeatsNothing(point: String) async throws {
        try await withTemporaryDirectory { lib in
            let sink = lib.appendingPathComponent("hook-received.jsonl")
            try writeHooks(lib, [["name": "log", "exec": ["tee", "-a", sink.path]]])
            #expect(try run(["add", "Seed", "--date", "2026-11-20"], lib).status == 0)
            let killed = try run(["add", "New", "--date", "2026-11-21"], lib, crashAt: point)
            #expect(killed.signalled, "the kill at \(point) landed (\(killed.stderr))")

            let delivered = try run(["events", "--deliver"], lib)
            #expect(delivered.status == 0, "\(delivered.stderr)")
            let listed = try run(["list", "--json"], lib)
            let names = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
                .compactMap { $0["name"] as? String }
            let logged = try events(lib)
            let got = try received(sink)
            // Exactly once each, in order, and only what the catalog holds.
            #expect(got.compactMap { $0["id"] as? String } == logged.compactMap { $0["id"] as? String }, "\(point)")
            let announced = got.compactMap { ($0["issue"] as? [String: Any])?["name"] as? String }
            #expect(Set(announced) == Set(names), "\(point): hook got \(announced), catalog has \(names)")
            #expect(names.contains("New") == (point != "catalog-transaction"))
        }
    }

    @Test func aHostileNameReachesAHookAsDataAndRunsNothing() async throws {
        try await withTemporaryDirectory { lib in
            let sink = lib.appendingPathComponent("hook-received")
            // The hook writes what it got (environment and stdin) to a file; nothing in between is a shell.
            let script = """
                import os, sys
                with open(sys.argv[1], "w") as out:
                    out.write(os.environ["ISSUES_EVENT_ISSUE_NAME"] + "\\u0000" + sys.stdin.read())
                """
            try writeHooks(lib, [["name": "py", "exec": ["python3", "-c", script, sink.path], "events": ["issue.added"]]])
            let name = "$(touch pwned) `touch pwned2` \"quoted\" 'single' ; touch pwned3 | x & y"
            let r = try run(["add", name, "--date", "2026-11-20"], lib)
            #expect(r.status == 0, "\(r.stderr)")
            let text = try String(contentsOf: sink, encoding: .utf8)
            let parts = text.split(separator: "\u{0}", maxSplits: 1).map(String.init)
            #expect(parts.first == name)
            let json = try #require(try JSONSerialization.jsonObject(with: Data((parts.last ?? "").utf8)) as? [String: Any])
            #expect((json["issue"] as? [String: Any])?["name"] as? String == name)
            let cwd = FileManager.default.currentDirectoryPath
            for file in ["pwned", "pwned2", "pwned3"] {
                #expect(!FileManager.default.fileExists(atPath: "\(cwd)/\(file)"))
                #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent(file).path))
            }
        }
    }

    @Test func aWebhookAnswering500GetsTheSameEventAgainSigned() async throws {
        let receiver = try await TestWebhookReceiver.start()
        defer { Task { try? await receiver.shutdown() } }
        try await withTemporaryDirectory { lib in
            let secret = "s3cret with spaces"
            try writeHooks(lib, [["name": "hub", "webhook": receiver.url, "secret": secret]])
            receiver.answer([500])
            let r = try run(["add", "Signed", "--date", "2026-11-20"], lib)
            #expect(r.status == 0, "\(r.stderr)")
            let deliveries = receiver.deliveries
            try #require(deliveries.count == 2, "\(deliveries.map(\.status)) \(r.stderr)")
            #expect(deliveries.map(\.status) == [500, 200])
            #expect(deliveries[0].header("X-Issues-Event-Id") == deliveries[1].header("X-Issues-Event-Id"))
            #expect(deliveries[0].body == deliveries[1].body)
            for delivery in deliveries {
                let timestamp = try #require(delivery.header("X-Issues-Timestamp"))
                let signature = try #require(delivery.header("X-Issues-Signature"))
                // Verified by openssl, not by our own code.
                let mac = try CommandRunner.run(
                    "/usr/bin/openssl", ["dgst", "-sha256", "-hmac", secret],
                    stdin: timestamp + "." + String(decoding: delivery.body, as: UTF8.self))
                let hex = mac.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                #expect(signature == "sha256=" + (hex ?? "?"))
            }
            let body = try #require(try JSONSerialization.jsonObject(with: Data(deliveries[1].body)) as? [String: Any])
            #expect(body["kind"] as? String == "issue.added")
            #expect(body["id"] as? String == deliveries[1].header("X-Issues-Event-Id"))
            // Acknowledged: a later delivery run sends nothing again.
            #expect(try run(["events", "--deliver"], lib).status == 0)
            #expect(receiver.deliveries.count == 2)
        }
    }

    /// Issue 46 item 9: a webhook that answers with a redirect to another origin does not get the signed event
    /// sent on there; the failure names the redirect.
    @Test func aWebhookRedirectIsNotFollowedToAnotherOrigin() async throws {
        let receiver = try await TestWebhookReceiver.start()
        defer { Task { try? await receiver.shutdown() } }
        try await withTestServer { server in
            server.setFaults("/hook", Faults(redirectTo: receiver.url))
            try await withTemporaryDirectory { lib in
                try writeHooks(lib, [["name": "hub", "webhook": server.url("/hook"), "secret": "k"]])
                let r = try run(["add", "Redirected", "--date", "2026-11-20"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stderr.contains("a redirect, which a webhook does not follow"), "\(r.stderr)")
                #expect(receiver.deliveries.isEmpty, "\(receiver.deliveries.map(\.status))")
            }
        }
    }

    @Test func followSeesAnotherProcesssChangeWithinASecondAndEndsCleanly() async throws {
        try await withTemporaryDirectory { lib in
            #expect(try run(["add", "First", "--date", "2026-11-20"], lib).status == 0)
            let follower = try CommandRunner.start(
                CommandRunner.issuesBinary, ["events", "--follow", "--json", "--library", lib.path],
                environment: CommandRunner.environment())
            func lines() -> [Substring] {
                ((try? String(contentsOfFile: follower.stdoutPath, encoding: .utf8)) ?? "").split(separator: "\n")
            }
            try await waitUntil("the follower printed the first event") { lines().count == 1 }
            #expect(try run(["add", "Second", "--date", "2026-11-21"], lib).status == 0)
            let committed = ContinuousClock.now
            try await waitUntil("the follower saw the second event", timeout: .seconds(5)) { lines().count == 2 }
            let elapsed = ContinuousClock.now - committed
            #expect(elapsed < .seconds(1), "seen after \(elapsed)")
            #expect(lines().last?.contains("\"Second\"") == true)
            follower.send(SIGTERM)
            let result = try await follower.wait(timeout: .seconds(10))
            #expect(result.status == 0 && !result.signalled, "\(result.stderr)")
        }
    }

    @Test func aHookThatNeverEndsIsKilledAtItsLimitAndDownloadsFinish() async throws {
        try await withTestServer { server in
            server.serve("/a.pdf", bytes: [UInt8](repeating: 7, count: 200_000))
            try await withTemporaryDirectory { lib in
                try writeHooks(lib, [["name": "stuck", "exec": ["sleep", "1000"], "timeout": 1, "events": ["issue.available"]]])
                #expect(try run(["add", "Slow Hook", "--date", "2026-11-20", "--asset", server.url("/a.pdf")], lib).status == 0)
                let start = ContinuousClock.now
                let r = try run(["download", "Slow Hook"], lib)
                let elapsed = ContinuousClock.now - start
                #expect(r.status == 0, "\(r.stderr)")
                #expect(elapsed < .seconds(10), "took \(elapsed)")
                #expect(r.stderr.contains("time limit"), "\(r.stderr)")
                let shown = try run(["show", "--json", "Slow Hook"], lib)
                #expect(shown.stdout.contains("\"status\":\"available\""), "\(shown.stdout)")
                // The failure is kept, to be retried later, and no `sleep` is left behind.
                let position = try String(
                    contentsOf: lib.appendingPathComponent(".catalog/hooks/stuck.json"), encoding: .utf8)
                #expect(position.contains("retryAt"))
                let left = try CommandRunner.run("/usr/bin/pgrep", ["-f", "^sleep 1000$"])
                #expect(left.stdout.isEmpty, "left running: \(left.stdout)")
            }
        }
    }

    @Test func aBadHooksSectionIsOneErrorNamingTheFile() async throws {
        try await withTemporaryDirectory { lib in
            try writeHooks(lib, [["name": "x", "exec": "rm -rf /"]])
            let r = try run(["add", "A", "--date", "2026-11-20"], lib)
            #expect(r.status == 1)
            #expect(r.stderr.contains("config.json") && r.stderr.contains("hooks[0].exec"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
        }
    }
}
