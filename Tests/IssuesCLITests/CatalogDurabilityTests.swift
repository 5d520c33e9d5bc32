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

    /// The index (what `list` reads) and the records (what `show` reads) tell the same story.
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
        let writes = ["catalog-intent", "catalog-record", "catalog-records-written", "catalog-index-appended"]
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

    /// The saved download list's steps (an issue's anchor made, then written; each marker linked; markers
    /// removed, then the anchor): a kill at each leaves a library whose downloads the next run completes,
    /// and nothing for `verify` to report after it.
    @Test(arguments: ["pending-anchor-created", "pending-marker-linked", "pending-markers-removed"])
    func aKillWhileSavingDownloadsLeavesThemToTheNextRun(point: String) async throws {
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
                // One's only marker removed, then the kill: its anchor is left for the next run's clean-up.
                let first = point == "pending-markers-removed" ? ["download", "One"] : ["download", "--jobs", "1"]
                let killed = try run(first, lib, crashAt: point)
                #expect(killed.signalled, "the kill at \(point) landed (\(killed.stderr))")
                try expectConsistent(lib, "after the kill at \(point)")
                let again = try run(["download"], lib)
                #expect(again.status == 0, "\(again.stderr)")
                let final = try listed(lib)
                #expect(final["Two"]?["status"] as? String == "available" && final["One"]?["status"] as? String == "available")
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(point): \(verify.stdout)")
                let pending = lib.appendingPathComponent(".catalog/pending").path
                #expect(try FileManager.default.contentsOfDirectory(atPath: pending).isEmpty)
            }
        }
    }

    /// Buckets split in sixteen when one grows past its limit (made tiny here): a kill while the new
    /// depth is built, or right after it was committed, loses nothing and leaves one depth in force.
    @Test(arguments: ["split-recorded", "split-built", "split-committed"])
    func aKillDuringABucketSplitLosesNothing(point: String) async throws {
        try await withTemporaryDirectory { lib in
            for i in 0..<3 {
                #expect(try run(["add", "Issue \(i)", "--date", "2026-11-20", "--asset", Self.url], lib).status == 0)
            }
            let killed = try CommandRunner.issues(
                ["add", "Issue 3", "--date", "2026-11-20"], library: lib,
                environment: ["ISSUES_CRASH_AT": point, "ISSUES_SPLIT_BYTES": "100"])
            #expect(killed.signalled, "the kill at \(point) landed inside a split")
            #expect(Set(try listed(lib).keys) == ["Issue 0", "Issue 1", "Issue 2", "Issue 3"])
            try expectConsistent(lib, "after a split killed at \(point)")
            let folders = try FileManager.default.contentsOfDirectory(atPath: lib.path + "/.catalog")
            #expect(folders.filter { $0.hasPrefix("issues-") }.count == 1, "\(folders)")
            #expect(try run(["verify"], lib).status == 0)
            // The split happens again, whole, on the next write over the limit.
            let more = try CommandRunner.issues(
                ["add", "Issue 4", "--date", "2026-11-20"], library: lib, environment: ["ISSUES_SPLIT_BYTES": "100"])
            #expect(more.status == 0, "\(more.stderr)")
            #expect(try listed(lib).count == 5)
            #expect(try run(["verify"], lib).status == 0)
        }
    }

    /// Every file under `.catalog` with its bytes: what a refused open must leave as it was.
    func catalogFiles(_ lib: URL) throws -> [String: Data] {
        let base = lib.path + "/.catalog"
        var files: [String: Data] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: base) {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isFolder), !isFolder.boolValue
            else { continue }
            files[path] = try Data(contentsOf: URL(fileURLWithPath: base + "/" + path))
        }
        return files
    }

    /// library.json's bucketDigits disagrees with `.catalog/`: a backup of the marker restored after a split
    /// (2 on disk 3), or a flipped digit (5 on disk 2). Opening used to take the other depth for a split's
    /// leftovers and delete it, records and all. Now every command refuses, naming both, and changes nothing;
    /// `verify --repair` merges what is on disk, and no issue is lost.
    @Test(arguments: ["restored", "flipped"])
    func aMarkerThatDisagreesWithTheBucketsLosesNoRecord(variant: String) async throws {
        try await withTemporaryDirectory { lib in
            for i in 0..<3 {
                #expect(try run(["add", "Issue \(i)", "--date", "2026-11-20", "--asset", Self.url], lib).status == 0)
            }
            let marker = lib.appendingPathComponent("library.json")
            let (said, onDisk): (Int, Int)
            if variant == "restored" {
                let backup = try Data(contentsOf: marker)
                let split = try CommandRunner.issues(
                    ["add", "Issue 3", "--date", "2026-11-20"], library: lib, environment: ["ISSUES_SPLIT_BYTES": "100"])
                #expect(split.status == 0, "\(split.stderr)")
                try backup.write(to: marker)
                (said, onDisk) = (2, 3)
            } else {
                #expect(try run(["add", "Issue 3", "--date", "2026-11-20"], lib).status == 0)
                let text = try String(contentsOf: marker, encoding: .utf8)
                #expect(text.contains("\"bucketDigits\":2"))
                try text.replacingOccurrences(of: "\"bucketDigits\":2", with: "\"bucketDigits\":5")
                    .write(to: marker, atomically: true, encoding: .utf8)
                (said, onDisk) = (5, 2)
            }
            let folders = try FileManager.default.contentsOfDirectory(atPath: lib.path + "/.catalog")
            #expect(folders.filter { $0.hasPrefix("issues-") } == ["issues-\(onDisk)"], "\(folders)")
            let before = try catalogFiles(lib)

            for command in [["list"], ["show", "Issue 0"], ["add", "Issue 9", "--date", "2026-11-21"], ["verify"]] {
                let r = try run(command, lib)
                #expect(r.status == 1, "\(command): \(r.stdout) \(r.stderr)")
                #expect(r.stderr.hasPrefix("error: "), "\(command): \(r.stderr)")
                #expect(r.stderr.contains("bucketDigits \(said)") && r.stderr.contains("issues-\(onDisk)"), "\(r.stderr)")
                #expect(r.stderr.contains("verify --repair"), "\(r.stderr)")
                #expect(try catalogFiles(lib) == before, "\(command) changed the catalog")
            }

            let repair = try run(["verify", "--repair"], lib)
            #expect(repair.status == 0, "\(repair.stdout) \(repair.stderr)")
            #expect(repair.stdout.contains("repaired: bucketDepthMismatch"), "\(repair.stdout)")
            #expect(Set(try listed(lib).keys) == ["Issue 0", "Issue 1", "Issue 2", "Issue 3"])
            try expectConsistent(lib, "after the repair")
            let after = try FileManager.default.contentsOfDirectory(atPath: lib.path + "/.catalog")
            #expect(after.filter { $0.hasPrefix("issues-") }.count == 1, "\(after)")
            let verify = try run(["verify"], lib)
            #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
            #expect(try run(["add", "Issue 4", "--date", "2026-11-20"], lib).status == 0)
            #expect(try listed(lib).count == 5)
        }
    }

    /// The bucket file holding the folder claim line, when it holds nothing else (a name whose claim and
    /// record fall into different buckets), with its bytes.
    func loneClaimBucket(_ lib: URL) throws -> (path: String, bytes: Data)? {
        let base = lib.path + "/.catalog/issues-2"
        for name in try FileManager.default.contentsOfDirectory(atPath: base) where name.hasSuffix(".jsonl") {
            let data = try Data(contentsOf: URL(fileURLWithPath: base + "/" + name))
            let text = String(decoding: data, as: UTF8.self)
            if text.contains("\"claim\":") && !text.contains("\"issue\":") { return (base + "/" + name, data) }
        }
        return nil
    }

    /// A damaged folder-claim line: `remove` used to move the content into the trash, fail on the claim's
    /// bucket when it committed, and leave an intent that made every later `list` and `add` fail. Now the
    /// removal reads every bucket it will rewrite first: it fails naming the bucket, and nothing moves.
    @Test func aRemoveWithADamagedClaimLineMovesNothing() async throws {
        try await withTemporaryDirectory { root in
            var found: (lib: URL, name: String, claim: (path: String, bytes: Data))?
            for i in 0..<20 where found == nil {
                let lib = root.appendingPathComponent("lib\(i)")
                let name = "Claimed \(i)"
                #expect(try run(["add", name, "--date", "2026-11-20", "--asset", Self.url], lib).status == 0)
                if let claim = try loneClaimBucket(lib) { found = (lib, name, claim) }
            }
            let (lib, name, claim) = try #require(found, "no name put its claim in a bucket of its own")
            let folder = lib.path + "/" + name
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("page".utf8).write(to: URL(fileURLWithPath: folder + "/page.pdf"))
            let damaged = String(decoding: claim.bytes, as: UTF8.self).replacingOccurrences(of: "\"claim\":\"", with: "\"claim\":!\"")
            try Data(damaged.utf8).write(to: URL(fileURLWithPath: claim.path))

            let r = try run(["remove", name], lib)
            #expect(r.status == 1)
            #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(claim.path), "\(r.stderr)")
            #expect(FileManager.default.contents(atPath: folder + "/page.pdf") == Data("page".utf8))
            let trash = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.trash")) ?? []
            #expect(trash.filter { $0 != ".lock" }.isEmpty, "\(trash)")
            #expect(!FileManager.default.fileExists(atPath: lib.path + "/.catalog/intent"))
            let listed = try listed(lib)
            #expect(listed[name] != nil && listed[name]?["removing"] == nil, "\(listed)")
            #expect(try run(["add", "Other", "--date", "2026-11-21"], lib).status == 0)

            // Once the line is mended, the removal goes through.
            try claim.bytes.write(to: URL(fileURLWithPath: claim.path))
            let again = try run(["remove", name], lib)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder))
            #expect(Set(try self.listed(lib).keys) == ["Other"])
            #expect(try run(["verify"], lib).status == 0)
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

    static let upgradePoints = ["upgrade-backup", "upgrade-built", "upgrade-moved", "upgrade-committed"]

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
            // Before the commit the old file is as it was; the copy exists from the first step on.
            if point != "upgrade-committed" { #expect(marker == original) }
            #expect(FileManager.default.fileExists(atPath: lib.appendingPathComponent("library.json.v1").path))

            let names = Set(try listed(lib).keys)
            #expect(names == ["The Daily 2026-11-20", "Gone Weekly", "Interrupted Monthly", "Quarterly é/..\\ Review"])
            #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent("library.json.v1").path))
            let text = try String(contentsOf: lib.appendingPathComponent("library.json"), encoding: .utf8)
            #expect(text.contains("\"version\":3"))
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
