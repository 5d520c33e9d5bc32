import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Events beyond the process that made them: `issues serve` hands the hooks what a killed process committed
/// but never delivered, and retries a failing hook when its backoff ends with nothing else happening; and
/// `library.low-space`, announced once each time the free space falls under the configured threshold.
@Suite(.timeLimit(.minutes(5))) struct EventServiceCLITests {
    /// Every command of these tests backs a failing hook off 2 s at first (a debug build's knob), not 30 s.
    let environment = ["ISSUES_HOOK_BACKOFF": "2"]

    func run(_ args: [String], _ lib: URL, crashAt point: String? = nil) throws -> CommandResult {
        var environment = self.environment
        if let point { environment["ISSUES_CRASH_AT"] = point }
        return try CommandRunner.issues(args, library: lib, environment: environment)
    }

    func writeConfig(_ lib: URL, _ object: [String: Any]) throws {
        try FileManager.default.createDirectory(at: lib, withIntermediateDirectories: true)
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try data.write(to: lib.appendingPathComponent("config.json"))
    }

    /// The `id`s of the JSON lines in `file` (what a hook appended), in order.
    func ids(_ file: URL) -> [String] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    /// The events `issues events --json` prints.
    func events(_ lib: URL) throws -> [[String: Any]] {
        let r = try run(["events", "--json"], lib)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func theServiceDeliversWhatAKilledProcessLeftAndRetriesAFailingHookWhenItsBackoffEnds() async throws {
        try await withTemporaryDirectory { folder in
            let lib = folder.appendingPathComponent("library")
            let logged = folder.appendingPathComponent("log.jsonl")
            let gated = folder.appendingPathComponent("gate.jsonl")
            let gate = folder.appendingPathComponent("open")
            // `gate` fails until the file `open` exists: the event reaches it as stdin, never in the script.
            try writeConfig(
                lib,
                [
                    "hooks": [
                        ["name": "log", "exec": ["tee", "-a", logged.path]],
                        ["name": "gate", "exec": ["sh", "-c", "test -e \"$1\" && cat >> \"$2\"", "gate", gate.path, gated.path]],
                    ]
                ])
            let seeded = try run(["add", "Seed", "--date", "2026-11-20"], lib)
            #expect(seeded.status == 0 && seeded.stderr.contains("hook gate failed"), "\(seeded.stderr)")
            let killed = try run(["add", "Left", "--date", "2026-11-21"], lib, crashAt: "hook-delivering")
            #expect(killed.signalled, "killed after its commit, before its hooks (\(killed.stderr))")
            #expect(ids(logged).count == 1)

            let service = try CommandRunner.start(
                CommandRunner.issuesBinary, ["serve", "--no-http", "--library", lib.path],
                environment: CommandRunner.environment(environment))
            try await waitUntil("the service handed the log hook the killed process's event", timeout: .seconds(30)) {
                ids(logged).count == 2
            }
            #expect(ids(gated).isEmpty)
            // Nothing else happens in the library: only the retry timer can deliver now.
            #expect(FileManager.default.createFile(atPath: gate.path, contents: nil))
            try await waitUntil("the gate hook retried when its backoff ended", timeout: .seconds(60)) {
                ids(gated).count == 2
            }
            service.send(SIGTERM)
            let stopped = try await service.wait(timeout: .seconds(20))
            #expect(stopped.status == 0, "\(stopped.stderr)")

            // Each hook got each event once, in the log's order.
            let all = try events(lib).compactMap { $0["id"] as? String }
            #expect(all.count == 2)
            #expect(ids(logged) == all)
            #expect(ids(gated) == all)
        }
    }

    @Test func lowSpaceIsAnnouncedOnceEachTimeTheSpaceFallsUnderTheThreshold() async throws {
        try await withTestServer { server in
            server.serve("/a.pdf", bytes: patternBytes(count: 10_000))
            try await withTemporaryDirectory { lib in
                // Any disk is "low" under 9 EB; any disk has a byte free.
                let everything = 9_000_000_000_000_000_000
                func lowSpaceEvents() throws -> [[String: Any]] {
                    try events(lib).filter { $0["kind"] as? String == "library.low-space" }
                }
                func addAndDownload(_ name: String) throws {
                    #expect(try run(["add", name, "--date", "2026-11-20", "--asset", server.url("/a.pdf")], lib).status == 0)
                    let r = try run(["download", name], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                try writeConfig(lib, ["low-space": everything])
                let shown = try run(["config"], lib)
                #expect(shown.stdout.contains("low-space") && shown.stdout.contains("config.json"), "\(shown.stdout)")

                try addAndDownload("A")
                var low = try lowSpaceEvents()
                #expect(low.count == 1)
                #expect((low.first?["detail"] as? String)?.contains("bytes free") == true, "\(low)")
                try addAndDownload("B")
                #expect(try lowSpaceEvents().count == 1, "still low: not announced again")

                try writeConfig(lib, ["low-space": 1])
                try addAndDownload("C")
                #expect(try lowSpaceEvents().count == 1, "back above the threshold: nothing to announce")
                try writeConfig(lib, ["low-space": everything])
                try addAndDownload("D")
                low = try lowSpaceEvents()
                #expect(low.count == 2, "low again after it was not: announced again")

                try writeConfig(lib, ["low-space": "plenty"])
                let bad = try run(["download"], lib)
                #expect(bad.status != 0 && bad.stderr.contains("config.json, line 1"), "\(bad.stderr)")
            }
        }
    }
}
