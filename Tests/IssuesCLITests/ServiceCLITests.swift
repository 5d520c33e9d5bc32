import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `issues serve --no-http` as systemd runs it: a real process with `NOTIFY_SOCKET` and a watchdog, a
/// second start refused, SIGTERM ending it with 0, and kill -9 in the middle of a download it started
/// losing no byte (the next start resumes it).
@Suite(.timeLimit(.minutes(5))) struct ServiceCLITests {
    func run(_ args: [String], _ library: URL) throws -> CommandResult {
        try CommandRunner.issues(args, library: library)
    }

    func feed(_ server: TestHTTPServer, items: [(String, String)]) -> [UInt8] {
        SubscriptionCLITests.rss(
            items.map { .init(guid: $0.0, title: $0.0, date: $0.1, url: server.url("/\($0.0).mp3")) }, title: "Service Cast")
    }

    /// Starts the service on `library`, with systemd's variables when `notify` is given.
    func startService(_ library: URL, notify: TestNotifySocket? = nil) throws -> RunningCommand {
        var environment = CommandRunner.environment()
        if let notify {
            environment["NOTIFY_SOCKET"] = notify.path
            environment["WATCHDOG_USEC"] = "300000"
        }
        return try CommandRunner.start(
            CommandRunner.issuesBinary, ["serve", "--no-http", "--library", library.path], environment: environment)
    }

    /// Makes every subscription due now (its last-checked status forgotten), as a first start after a
    /// subscribe would find it a day later.
    func makeDue(_ library: URL) throws {
        let folder = library.appendingPathComponent(".sync")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".json") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// A stop that comes while the service is still starting (it has taken the library's service lock, and its
    /// services are not yet running) ends it with 0 once it is up, not by the signal's default action.
    @Test func aStopDuringTheStartEndsWithZero() async throws {
        try await withTemporaryDirectory { folder in
            let library = folder.appendingPathComponent("library")
            #expect(try run(["add", "Starter", "--date", "2026-11-27"], library).status == 0)
            let pidFile = library.appendingPathComponent(".sync/service.pid").path
            for attempt in 1...5 {
                let service = try startService(library)
                try await waitUntil("the service lock taken", timeout: .seconds(20)) {
                    (try? String(contentsOfFile: pidFile, encoding: .utf8))?.contains("\(service.pid)") == true
                }
                service.send(SIGTERM)
                let stopped = try await service.wait(timeout: .seconds(20))
                #expect(stopped.status == 0 && !stopped.signalled, "attempt \(attempt): \(stopped.stderr)")
            }
        }
    }

    @Test func readyWatchdogOneInstanceAndANewIssueDownloadedThenSIGTERMExitsZero() async throws {
        try await withTestServer { server in
            server.serve("/A.mp3", bytes: patternBytes(count: 1000))
            server.serve("/B.mp3", bytes: patternBytes(count: 50_000))
            server.serve("/feed.xml", bytes: feed(server, items: [("A", "Mon, 23 Nov 2026 10:00:00 GMT")]))
            try await withTemporaryDirectory { folder in
                let library = folder.appendingPathComponent("library")
                var r = try run(["subscribe", server.url("/feed.xml")], library)
                #expect(r.status == 0, "\(r.stderr)")
                server.serve(
                    "/feed.xml",
                    bytes: feed(server, items: [("B", "Wed, 25 Nov 2026 10:00:00 GMT"), ("A", "Mon, 23 Nov 2026 10:00:00 GMT")]))
                try makeDue(library)

                let notify = try TestNotifySocket(path: folder.appendingPathComponent("notify").path)
                defer { notify.close() }
                let service = try startService(library, notify: notify)
                try await waitUntil("READY=1", timeout: .seconds(20)) { notify.messages.contains("READY=1") }
                try await waitUntil("two watchdog pings", timeout: .seconds(10)) {
                    notify.messages.filter { $0 == "WATCHDOG=1" }.count >= 2
                }
                try await waitUntil("the new issue downloaded", timeout: .seconds(30)) {
                    service.stderrSoFar.contains("downloaded \"B\"")
                }
                #expect(service.stderrSoFar.contains("\"Service Cast\": 1 new issue; next check"), "\(service.stderrSoFar)")
                // One service per library: a second start names the first one's PID.
                let second = try startService(library)
                let refused = try await second.wait(timeout: .seconds(20))
                #expect(refused.status == 1 && refused.stderr.contains("PID \(service.pid)"), "\(refused.stderr)")

                service.send(SIGTERM)
                let stopped = try await service.wait(timeout: .seconds(20))
                #expect(stopped.status == 0 && !stopped.signalled, "\(stopped.stderr)")
                #expect(notify.messages.contains("STOPPING=1"))
                r = try run(["show", "--json", "B"], library)
                #expect(r.stdout.contains("\"status\":\"available\""), "\(r.stdout)")
                #expect(server.bodyBytesSent("/B.mp3") == 50_000)
            }
        }
    }

    @Test func killedMidDownloadTheNextStartResumesWithoutFetchingAByteTwice() async throws {
        try await withTestServer { server in
            let size = 1_000_000
            server.serve("/A.mp3", bytes: patternBytes(count: 1000))
            server.serve("/Big.mp3", bytes: patternBytes(count: size))
            // The server stalls a fifth of the way in, so the kill lands mid-transfer however long the other
            // suites hold the cooperative pool (a 16 KB/s throttle once finished the file first on CI).
            let held = 200_000
            server.setFaults("/Big.mp3", Faults(holdAfterBytes: held))
            server.serve("/feed.xml", bytes: feed(server, items: [("A", "Mon, 23 Nov 2026 10:00:00 GMT")]))
            try await withTemporaryDirectory { folder in
                let library = folder.appendingPathComponent("library")
                var r = try run(["subscribe", server.url("/feed.xml")], library)
                #expect(r.status == 0, "\(r.stderr)")
                server.serve(
                    "/feed.xml",
                    bytes: feed(server, items: [("Big", "Wed, 25 Nov 2026 10:00:00 GMT"), ("A", "Mon, 23 Nov 2026 10:00:00 GMT")]))
                try makeDue(library)

                let first = try startService(library)
                try await waitUntil("part of the download on disk", timeout: .seconds(30)) {
                    server.bodyBytesSent("/Big.mp3") >= held
                }
                first.send(SIGKILL)
                _ = try await first.wait(timeout: .seconds(10))
                let sentBefore = server.bodyBytesSent("/Big.mp3")
                #expect(sentBefore < size)
                server.setFaults("/Big.mp3", Faults())

                let second = try startService(library)
                try await waitUntil("the second service started", timeout: .seconds(60)) {
                    second.stderrSoFar.contains("scheduler started")
                }
                try await waitUntil("the download resumed and finished", timeout: .seconds(60)) {
                    (try? run(["show", "--json", "Big"], library))?.stdout.contains("\"status\":\"available\"") == true
                }
                second.send(SIGTERM)
                let stopped = try await second.wait(timeout: .seconds(20))
                #expect(stopped.status == 0, "\(stopped.stderr)")
                #expect(stopped.stderr.contains("downloading \"Big\""), "the next start resumed it: \(stopped.stderr)")
                r = try run(["show", "--json", "Big"], library)
                #expect(r.stdout.contains("\"status\":\"available\""), "\(r.stdout)")
                // Only what the kill caught in flight (not yet on disk) is fetched again.
                let total = server.bodyBytesSent("/Big.mp3")
                #expect(total >= size && total <= size + 256 * 1024, "sent \(total) for \(size)")
                r = try run(["list", "--json"], library)
                #expect(r.stdout.components(separatedBy: "\"name\":\"Big\"").count == 2, "one issue Big")
            }
        }
    }

    /// SIGHUP reads the config file again: downloads started after it send the new headers and file new issues
    /// by the new template, and a broken file is logged and changes nothing (the service keeps running).
    @Test func sighupReadsTheConfigFileAgainForWhatStartsLater() async throws {
        try await withTestServer { server in
            server.serve("/A.mp3", bytes: patternBytes(count: 1000), contentType: "audio/mpeg")
            server.serve("/B.mp3", bytes: patternBytes(count: 2000), contentType: "audio/mpeg")
            server.serve("/feed.xml", bytes: feed(server, items: [("A", "Mon, 23 Nov 2026 10:00:00 GMT")]))
            try await withTemporaryDirectory { folder in
                let library = folder.appendingPathComponent("library")
                let config = library.appendingPathComponent("config.json")
                try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
                try Data(#"{"headers": {"127.0.0.1": {"X-Edition": "one"}}}"#.utf8).write(to: config)
                var r = try run(["subscribe", "--initial", "0", server.url("/feed.xml")], library)
                #expect(r.status == 0, "\(r.stderr)")
                server.serve(
                    "/feed.xml",
                    bytes: feed(server, items: [("First", "Tue, 24 Nov 2026 10:00:00 GMT"), ("A", "Mon, 23 Nov 2026 10:00:00 GMT")]))
                server.serve("/First.mp3", bytes: patternBytes(count: 1000), contentType: "audio/mpeg")
                try makeDue(library)

                let service = try startService(library)
                try await waitUntil("the first issue downloaded", timeout: .seconds(30)) {
                    service.stderrSoFar.contains("downloaded \"First\"")
                }
                #expect(server.requests("/First.mp3").last?.header("X-Edition") == "one", "\(service.stderrSoFar)")

                // A broken file: logged, and nothing changes.
                try Data(#"{"headers": "#.utf8).write(to: config)
                service.send(SIGHUP)
                try await waitUntil("the broken file reported", timeout: .seconds(20)) {
                    service.stderrSoFar.contains("the config file was not reloaded")
                }

                try Data(
                    #"{"headers": {"127.0.0.1": {"X-Edition": "two"}}, "layout-template": "{publication}/{title}.{ext}"}"#
                        .utf8
                ).write(to: config)
                server.serve(
                    "/feed.xml",
                    bytes: feed(
                        server,
                        items: [
                            ("B", "Wed, 25 Nov 2026 10:00:00 GMT"), ("First", "Tue, 24 Nov 2026 10:00:00 GMT"),
                            ("A", "Mon, 23 Nov 2026 10:00:00 GMT"),
                        ]))
                try makeDue(library)
                service.send(SIGHUP)
                try await waitUntil("the new issue downloaded", timeout: .seconds(30)) {
                    service.stderrSoFar.contains("downloaded \"B\"")
                }
                #expect(server.requests("/B.mp3").last?.header("X-Edition") == "two", "\(service.stderrSoFar)")
                #expect(
                    FileManager.default.fileExists(atPath: library.appendingPathComponent("Service Cast/B.mp3").path),
                    "filed by the reloaded template: \(service.stderrSoFar)")
                service.send(SIGTERM)
                let stopped = try await service.wait(timeout: .seconds(20))
                #expect(stopped.status == 0, "\(stopped.stderr)")
                r = try run(["show", "--json", "B"], library)
                #expect(r.stdout.contains("\"status\":\"available\""), "\(r.stdout)")
            }
        }
    }
}
