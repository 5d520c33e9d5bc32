import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The catalog under `kill -9` and concurrency, through real `issues` processes. The debug build dies
/// with SIGKILL at a named instant inside a write when `ISSUES_CRASH_AT` names it, so every crash
/// window is hit for certain (and the test checks that the kill landed).
@Suite(.timeLimit(.minutes(5))) struct CatalogDurabilityTests {
    static let url = "https://cdn.example.com/pub/2026/11/20/issue.pdf"

    func run(_ args: [String], _ lib: URL, crashAt point: String? = nil) throws -> CommandResult {
        try CommandRunner.issues(args, library: lib, environment: point.map { ["ISSUES_CRASH_AT": $0] } ?? [:])
    }

    /// Every issue as `list --json` gives it, by name.
    func listed(_ lib: URL) throws -> [String: [String: Any]] {
        let r = try run(["list", "--json"], lib)
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        var byName: [String: [String: Any]] = [:]
        for issue in list { if let name = issue["name"] as? String { byName[name] = issue } }
        return byName
    }

    /// The listing (what `list` reads) and the records (what `show` reads) tell the same story.
    func expectConsistent(_ lib: URL, _ context: String) throws {
        for (name, issue) in try listed(lib) {
            let r = try run(["show", "--json", name], lib)
            #expect(r.status == 0, "\(context): show \(name): \(r.stderr)")
            var shown = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            // `list --json` reads only the catalog: the cover, which `show` reads from the folder, is not in it.
            shown["cover"] = nil
            let canonical = { (object: [String: Any]) in
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            }
            #expect(try canonical(shown) == canonical(issue), "\(context): \(name) differs")
        }
    }

    static let cases: [(operation: [String], point: String)] = {
        // Inside the transaction (before its commit) and after the commit, before the process tells anyone.
        let writes = ["catalog-transaction", "catalog-committed"]
        let operations: [[String]] = [
            ["add", "New", "--date", "2026-11-21", "--asset", url], ["add-asset", "Seed A", url], ["remove", "Seed B"],
        ]
        return operations.flatMap { op in writes.map { (op, $0) } } + [(["remove", "Seed B"], "remove-trashed")]
    }()

    @Test(.slow, arguments: cases)
    func aKillInsideAnyWriteLeavesAConsistentCatalog(operation: [String], point: String) async throws {
        try await withTemporaryDirectory { lib in
            for name in ["Seed A", "Seed B"] {
                #expect(try run(["add", name, "--date", "2026-11-20", "--asset", Self.url], lib).status == 0)
            }
            let killed = try run(operation, lib, crashAt: point)
            #expect(killed.signalled, "the kill at \(point) landed inside \(operation[0]) (\(killed.stderr))")

            // Everything reported done before the kill is there, and both views agree.
            let names = Set(try listed(lib).keys)
            #expect(names.isSuperset(of: ["Seed A"]))
            try expectConsistent(lib, "after the kill at \(point)")
            let verify = try run(["verify", "--json"], lib)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
            let kinds = (report["problems"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.allSatisfy { $0 == "interruptedRemoval" }, "\(point): \(verify.stdout)")

            // Running the command again finishes the job (or finds it done), and leaves nothing to repair.
            let again = try run(operation, lib)
            #expect(again.status == 0 || again.stderr.contains("already exists"), "\(again.stderr)")
            try expectConsistent(lib, "after running \(operation[0]) again")
            #expect(try run(["verify"], lib).status == 0)
            let final = try listed(lib)
            switch operation[0] {
            case "add": #expect(final["New"] != nil)
            case "remove":
                #expect(final["Seed B"] == nil)
                #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent("Seed B").path))
            default: #expect((final["Seed A"]?["assetsTotal"] as? Int ?? 0) >= 2)
            }
        }
    }

    /// A download's changes of the saved list (its assets queued, then each finished one taken out) commit
    /// with the records: a kill inside one or right after it leaves a library whose downloads the next run
    /// completes, and nothing for `verify` to report after it.
    @Test(arguments: [("catalog-transaction", 1), ("catalog-transaction", 2), ("catalog-committed", 2)])
    func aKillWhileSavingDownloadsLeavesThemToTheNextRun(point: String, after: Int) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                server.serve("/a.pdf", bytes: patternBytes(count: 30_000, seed: 1))
                server.serve("/b.pdf", bytes: patternBytes(count: 30_000, seed: 2))
                #expect(
                    try run(
                        ["add", "Two", "--date", "2026-11-20", "--asset", server.url("/a.pdf"), "--asset", server.url("/b.pdf")],
                        lib
                    ).status == 0)
                #expect(try run(["add", "One", "--date", "2026-11-21", "--asset", server.url("/a.pdf")], lib).status == 0)
                let killed = try CommandRunner.issues(
                    ["download", "--jobs", "1"], library: lib,
                    environment: ["ISSUES_CRASH_AT": point, "ISSUES_CRASH_AFTER": String(after)])
                #expect(killed.signalled, "the kill at \(point) #\(after) landed (\(killed.stderr))")
                try expectConsistent(lib, "after the kill at \(point) #\(after)")
                let again = try run(["download"], lib)
                #expect(again.status == 0, "\(again.stderr)")
                let final = try listed(lib)
                #expect(final["Two"]?["status"] as? String == "available" && final["One"]?["status"] as? String == "available")
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(point): \(verify.stdout)")
                let database = lib.path + "/.catalog/catalog.sqlite"
                #expect(try SQLiteShell.run(database, "SELECT count(*) FROM pending") == "0\n")
            }
        }
    }

    /// A damaged record (its JSON cut short by hand): `remove` fails naming the database and the issue before it
    /// moves anything, later commands still work, and once the record is mended the removal goes through.
    @Test func aRemoveWithADamagedRecordMovesNothing() async throws {
        try await withTemporaryDirectory { lib in
            let name = "Claimed"
            #expect(try run(["add", name, "--date", "2026-11-20", "--asset", Self.url], lib).status == 0)
            let folder = lib.path + "/" + name
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("page".utf8).write(to: URL(fileURLWithPath: folder + "/page.pdf"))
            let database = lib.path + "/.catalog/catalog.sqlite"
            let record = try SQLiteShell.run(database, "SELECT record FROM issues WHERE name = '\(name)'")
            try SQLiteShell.run(database, "UPDATE issues SET record = substr(record, 1, 40) WHERE name = '\(name)'")

            let r = try run(["remove", name], lib)
            #expect(r.status == 1)
            #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(database), "\(r.stderr)")
            #expect(FileManager.default.contents(atPath: folder + "/page.pdf") == Data("page".utf8))
            let trash = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.trash")) ?? []
            #expect(trash.filter { $0 != ".lock" }.isEmpty, "\(trash)")
            #expect(try run(["add", "Other", "--date", "2026-11-21"], lib).status == 0)

            // Once the record is mended, the removal goes through.
            let quoted = record.trimmingCharacters(in: .newlines).replacingOccurrences(of: "'", with: "''")
            try SQLiteShell.run(database, "UPDATE issues SET record = '\(quoted)' WHERE name = '\(name)'")
            let again = try run(["remove", name], lib)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder))
            #expect(Set(try self.listed(lib).keys) == ["Other"])
            #expect(try run(["verify"], lib).status == 0)
        }
    }

    /// The database deleted or overwritten: every command refuses with an error naming it and the way back, and
    /// `verify --repair` rebuilds it from the issues' `issue.json` manifests (a damaged file kept aside): the
    /// downloaded issues are back with their files, and the library works on.
    @Test(arguments: ["deleted", "garbage"])
    func aLostOrDamagedDatabaseIsRebuiltFromTheManifests(damage: String) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                server.serve("/a.pdf", bytes: patternBytes(count: 30_000, seed: 1))
                for name in ["Kept 1", "Kept 2"] {
                    #expect(try run(["add", name, "--date", "2026-11-20", "--asset", server.url("/a.pdf")], lib).status == 0)
                }
                #expect(try run(["download", "--no-covers"], lib).status == 0)
                #expect(try run(["add", "Never downloaded", "--date", "2026-11-21"], lib).status == 0)
                let before = try listed(lib)
                let catalog = lib.path + "/.catalog"
                let database = catalog + "/catalog.sqlite"
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
                if damage == "garbage" { try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: database)) }

                let refused = try run(["list"], lib)
                #expect(refused.status == 1)
                #expect(refused.stderr.hasPrefix("error: ") && refused.stderr.contains(database), "\(refused.stderr)")
                #expect(refused.stderr.contains("verify --repair"), "\(refused.stderr)")

                let repair = try run(["verify", "--repair"], lib)
                #expect(repair.status == 0, "\(repair.stdout) \(repair.stderr)")
                #expect(repair.stdout.contains("repaired: damagedCatalog") && repair.stdout.contains("2 issue.json"), "\(repair.stdout)")
                let after = try listed(lib)
                #expect(Set(after.keys) == ["Kept 1", "Kept 2"])
                for name in ["Kept 1", "Kept 2"] {
                    #expect(after[name]?["status"] as? String == "available")
                    #expect(after[name]?["bytes"] as? Int == before[name]?["bytes"] as? Int)
                }
                let kept = try FileManager.default.contentsOfDirectory(atPath: catalog).filter { $0.contains(".damaged-") }
                #expect(kept.isEmpty == (damage == "deleted"), "\(kept)")
                #expect(try run(["verify"], lib).status == 0)
                #expect(try run(["add", "New", "--date", "2026-11-22"], lib).status == 0)
                #expect(try run(["download"], lib).status == 0)
            }
        }
    }

    @Test func twentyConcurrentWritersToOneIssueLoseNothing() async throws {
        try await withTemporaryDirectory { lib in
            #expect(try run(["add", "Shared", "--date", "2026-11-20"], lib).status == 0)
            let processes = try (0..<20).map { i in
                try CommandRunner.start(
                    CommandRunner.issuesBinary,
                    ["add-asset", "Shared", "https://cdn.example.com/\(i).pdf", "--library", lib.path],
                    environment: CommandRunner.environment())
            }
            var ids = Set<String>()
            for process in processes {
                let r = try await process.wait()
                #expect(r.status == 0, "\(r.stderr)")
                ids.insert(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let r = try run(["show", "--json", "Shared"], lib)
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let assets = try #require(shown["assets"] as? [[String: Any]])
            #expect(Set(assets.compactMap { $0["id"] as? String }) == ids)
            #expect(ids.count == 20)
            try expectConsistent(lib, "after 20 writers")
        }
    }

    static let upgradePoints = ["upgrade-built", "upgrade-committed"]

    @Test(arguments: upgradePoints)
    func aKillDuringTheVersionOneUpgradeLosesNothing(point: String) async throws {
        try await withTemporaryDirectory { root in
            let fixture = CommandRunner.packageRoot.appendingPathComponent("Tests/NewsstandIntegrationTests/Fixtures/v1-library")
            let lib = root.appendingPathComponent("lib")
            try FileManager.default.copyItem(at: fixture, to: lib)
            let original = try Data(contentsOf: lib.appendingPathComponent("library.json"))
            let killed = try run(["list"], lib, crashAt: point)
            #expect(killed.signalled, "the kill at \(point) landed inside the upgrade")
            let marker = try Data(contentsOf: lib.appendingPathComponent("library.json"))
            // Before the commit the old file is as it was.
            if point != "upgrade-committed" { #expect(marker == original) }

            let names = Set(try listed(lib).keys)
            #expect(names == ["The Daily 2026-11-20", "Gone Weekly", "Interrupted Monthly", "Quarterly é/..\\ Review"])
            let text = try String(contentsOf: lib.appendingPathComponent("library.json"), encoding: .utf8)
            #expect(text.contains("\"version\":4"))
            try expectConsistent(lib, "after an upgrade killed at \(point)")
        }
    }

    @Test func importFromStandardInputReportsEachIssueAndExportRoundTrips() async throws {
        try await withTemporaryDirectory { root in
            let one = root.appendingPathComponent("one")
            let input = """
                [{"name":"A","date":"2026-11-20","assets":[{"url":"\(Self.url)"}]},
                 {"name":"B","date":"2026-11-31"},
                 {"name":"C","date":"2026-11-19","assets":[{"url":"http://127.0.0.1:99999/x"}]},
                 {"name":"A","date":"2026-11-20"}]
                """
            var r = try CommandRunner.issues(["import", "-"], library: one, stdin: input)
            #expect(r.status == 1)
            #expect(r.stdout.contains("added \"A\""))
            #expect(r.stdout.contains("refused \"B\": the date \"2026-11-31\""))
            #expect(r.stdout.contains("refused \"C\""))
            #expect(r.stdout.contains("1 added, 3 refused"))
            #expect(r.stderr.hasPrefix("error: 3 of 4 issues"))
            #expect(r.stderr.split(separator: "\n").count == 1)

            r = try run(["export"], one)
            #expect(r.status == 0)
            let exported = r.stdout
            let two = root.appendingPathComponent("two")
            r = try CommandRunner.issues(["import", "-"], library: two, stdin: exported)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try run(["export"], two).stdout == exported)

            r = try CommandRunner.issues(["import", "-"], library: two, stdin: "{\"name\": ")
            #expect(r.status == 1)
            #expect(r.stderr.contains("standard input is not valid import JSON"))
        }
    }
}
