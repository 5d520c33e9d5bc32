import Foundation
import NewsstandTestSupport
import Testing

/// `schedule`, `configure --every` and `service install`/`uninstall` as real processes: the reason each
/// next check has, a server's `Cache-Control` and `Retry-After` honoured, and a unit file systemd accepts.
@Suite(.timeLimit(.minutes(5))) struct ScheduleCLITests {
    func run(_ args: [String], _ library: URL, environment: [String: String] = [:]) throws -> CommandResult {
        // `service install` is two words: --library goes after both.
        if args.first == "service" {
            return try CommandRunner.issues(
                Array(args.prefix(2)) + ["--library", library.path] + args.dropFirst(2), library: nil, environment: environment)
        }
        return try CommandRunner.issues(args, library: library, environment: environment)
    }

    func schedule(_ library: URL) throws -> [String: [String: Any]] {
        let r = try run(["schedule", "--json"], library)
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["name"] as? String).map { ($0, row) } })
    }

    @Test func eachNextCheckSaysWhyAndTheServerCanOnlyPushItLater() async throws {
        try await withTestServer { server in
            let rss = SubscriptionCLITests.rss(
                [.init(guid: "a", title: "Ep A", date: "Mon, 23 Nov 2026 10:00:00 GMT", url: server.url("/a.mp3"))],
                extra: "<ttl>2880</ttl>")
            server.serve("/ttl.xml", bytes: rss)
            server.serve("/cached.xml", bytes: SubscriptionCLITests.rss([], title: "Cached"))
            var cached = Faults()
            cached.extraHeaders = ["Cache-Control": "public, max-age=172800"]
            server.setFaults("/cached.xml", cached)
            server.serve("/busy.xml", bytes: SubscriptionCLITests.rss([], title: "Busy"))
            try await withTemporaryDirectory { folder in
                let library = folder.appendingPathComponent("library")
                for (path, name) in [("/ttl.xml", "TTL"), ("/cached.xml", "Cached"), ("/busy.xml", "Busy")] {
                    let r = try run(["subscribe", server.url(path), "--name", name, "--no-download"], library)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                // The server now asks to be left alone for an hour (more than a retry's short pause).
                server.setFaults("/busy.xml", Faults(unavailableResponses: 100, retryAfter: "3600"))
                var r = try run(["sync", "Busy"], library)
                #expect(r.status == 1 && r.stderr.contains("503"))
                #expect(server.requestCount("/busy.xml") == 2, "a long Retry-After is not retried at once")

                var rows = try schedule(library)
                #expect(rows["TTL"]?["reason"] as? String == "ttl")
                #expect((rows["TTL"]?["explanation"] as? String)?.contains("ttl asks for 2d") == true)
                #expect(rows["Cached"]?["reason"] as? String == "server asked")
                #expect(rows["Busy"]?["reason"] as? String == "server asked")
                #expect(rows["Busy"]?["failures"] as? Int == 1)
                #expect((rows["Busy"]?["explanation"] as? String)?.contains("Retry-After") == true)

                // A configured interval replaces adapting, but the feed's ttl still holds a shorter one back.
                r = try run(["configure", "TTL", "--every", "8h"], library)
                #expect(r.status == 0, "\(r.stderr)")
                rows = try schedule(library)
                #expect(rows["TTL"]?["reason"] as? String == "ttl" && rows["TTL"]?["intervalSeconds"] as? Int == 28_800)
                r = try run(["configure", "TTL", "--every", "3d"], library)
                rows = try schedule(library)
                #expect(rows["TTL"]?["reason"] as? String == "every" && rows["TTL"]?["intervalSeconds"] as? Int == 259_200)
                r = try run(["configure", "TTL", "--every", "10s"], library)
                #expect(r.status == 64 && r.stderr.contains("at least 1m"))
                r = try run(["configure", "TTL", "--adaptive"], library)
                #expect(r.status == 0)
                r = try run(["pause", "Cached"], library)
                rows = try schedule(library)
                #expect(rows["TTL"]?["reason"] as? String == "ttl")
                #expect(rows["Cached"]?["reason"] as? String == "paused" && rows["Cached"]?["nextCheck"] is NSNull)

                r = try run(["schedule"], library)
                #expect(r.status == 0 && r.stdout.contains("SUBSCRIPTION") && r.stdout.contains("paused"))

                // A feed that keeps failing is announced once, when it starts failing; a 410 pauses it for good.
                r = try run(["sync", "Busy"], library)
                #expect(r.status == 1)
                rows = try schedule(library)
                #expect(rows["Busy"]?["failures"] as? Int == 2)
                server.setFaults("/busy.xml", Faults(status: 410))
                r = try run(["sync", "Busy"], library)
                #expect(r.status == 1 && r.stderr.contains("gone"))
                rows = try schedule(library)
                #expect(rows["Busy"]?["reason"] as? String == "gone" && rows["Busy"]?["nextCheck"] is NSNull)
                r = try run(["events", "--json"], library)
                let kinds = r.stdout.split(separator: "\n").compactMap { line -> String? in
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                    return object["kind"] as? String
                }
                #expect(kinds.filter { $0 == "subscription.failing" }.count == 1, "\(kinds)")
                #expect(kinds.filter { $0 == "subscription.gone" }.count == 1, "\(kinds)")
            }
        }
    }

    @Test func theUnitIsWrittenOnceAcceptedBySystemdAndRemoved() async throws {
        try await withTemporaryDirectory { folder in
            let library = folder.appendingPathComponent("my library %h $HOME")
            let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("config").path]
            var r = try run(["service", "install", "--user", "--no-http"], library, environment: environment)
            #expect(r.status == 0, "\(r.stderr)")
            let unit = folder.appendingPathComponent("config/systemd/user/issues.service").path
            let text = try String(contentsOfFile: unit, encoding: .utf8)
            #expect(text.contains("Type=notify") && text.contains("WatchdogSec=") && text.contains("Restart=on-failure"))
        #expect(text.contains("LimitNOFILE=65536"))
            // The library's path reaches systemd quoted, its % and $ escaped: never a specifier or a variable.
            #expect(text.contains("\"--no-http\"") && text.contains("%%h $$HOME"))
            #expect(text.contains("ReadWritePaths=\"\(library.path.replacingOccurrences(of: "%", with: "%%").replacingOccurrences(of: "$", with: "$$"))\""))
            r = try run(["service", "install", "--user", "--no-http"], library, environment: environment)
            #expect(r.status == 0 && r.stdout.contains("unchanged"))

            let verify = try CommandRunner.run(
                "/usr/bin/systemd-analyze", ["verify", "--man=no", unit], environment: ProcessInfo.processInfo.environment)
            #expect(verify.status == 0, "systemd-analyze verify: \(verify.stderr)")

            r = try CommandRunner.issues(["service", "uninstall", "--user"], library: nil, environment: environment)
            #expect(r.status == 0 && !FileManager.default.fileExists(atPath: unit))
            r = try CommandRunner.issues(["service", "uninstall", "--user"], library: nil, environment: environment)
            #expect(r.status == 0 && r.stdout.contains("not installed"))
        }
    }
}
