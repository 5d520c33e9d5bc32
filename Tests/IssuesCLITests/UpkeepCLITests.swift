import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `pin`, `unpin`, `prune` and `verify --repair` through real `issues` processes against a real server
/// on 127.0.0.1, including `kill -9` inside a prune and inside a repair (the debug build dies at the
/// named crash point when `ISSUES_CRASH_AT` names it).
@Suite(.timeLimit(.minutes(5))) struct UpkeepCLITests {
    func run(_ args: [String], _ lib: URL, crashAt point: String? = nil) throws -> CommandResult {
        try CommandRunner.issues(args, library: lib, environment: point.map { ["ISSUES_CRASH_AT": $0] } ?? [:])
    }

    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// Every issue as `list --json` gives it, by name.
    func listed(_ lib: URL) throws -> [String: [String: Any]] {
        let r = try run(["list", "--json"], lib)
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require(try json(r.stdout) as? [[String: Any]])
        return Dictionary(
            uniqueKeysWithValues: list.compactMap { issue in (issue["name"] as? String).map { ($0, issue) } })
    }

    /// `list` (the index) and `show` (the records) agree.
    func expectConsistent(_ lib: URL, _ context: String) throws {
        for (name, issue) in try listed(lib) {
            let r = try run(["show", "--json", name], lib)
            #expect(r.status == 0, "\(context): show \(name): \(r.stderr)")
            var shown = try #require(try json(r.stdout) as? [String: Any])
            // `list --json` reads only the catalog: the cover, which `show` reads from the folder, is not in it.
            shown["cover"] = nil
            let canonical = { (object: [String: Any]) in
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            }
            #expect(try canonical(shown) == canonical(issue), "\(context): \(name) differs")
        }
    }

    static let body = patternBytes(count: 50_000)

    /// Five issues of "The Daily" (the 1st to the 5th), each with one downloaded file; the 2nd pinned.
    func seed(_ lib: URL, _ server: TestHTTPServer) throws {
        server.serve("/daily.pdf", bytes: Self.body)
        for day in 1...5 {
            let r = try run(
                ["add", "The Daily 2026-11-0\(day)", "--date", "2026-11-0\(day)", "--asset", server.url("/daily.pdf")],
                lib)
            #expect(r.status == 0, "\(r.stderr)")
        }
        // Without covers, so that each folder holds exactly its content's bytes, which prune's figures are checked
        // against (a cover's files count as the folder's: `prune` frees them too).
        let d = try run(["download", "--no-covers"], lib)
        #expect(d.status == 0, "\(d.stderr)")
        #expect(try run(["pin", "The Daily 2026-11-02"], lib).stdout == "pinned \"The Daily 2026-11-02\"\n")
    }

    @Test func pinsShowInListAndShowAndProtectFromPrune() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try seed(lib, server)
                var r = try run(["list"], lib)
                let pinnedRow = try #require(
                    r.stdout.split(separator: "\n").first { $0.hasPrefix("The Daily 2026-11-02") })
                #expect(pinnedRow.contains(" yes "), "\(r.stdout)")
                #expect(r.stdout.split(separator: "\n").first?.contains("PIN") == true)
                let list = try listed(lib)
                #expect(list["The Daily 2026-11-02"]?["pinned"] as? Bool == true)
                #expect(list["The Daily 2026-11-01"]?["pinned"] as? Bool == false)
                r = try run(["show", "The Daily 2026-11-02"], lib)
                #expect(r.stdout.contains("pinned:  yes") && r.stdout.contains("publication: The Daily"), "\(r.stdout)")
                let shown = try #require(
                    try json(try run(["show", "--json", "The Daily 2026-11-02"], lib).stdout) as? [String: Any])
                #expect(shown["pinned"] as? Bool == true)

                // The dry run lists exactly what the real run removes, with the same bytes.
                let dry = try run(["prune", "--keep", "2", "--dry-run", "--json"], lib)
                #expect(dry.status == 0, "\(dry.stderr)")
                // Each folder also holds its sidecar (issue.json), which the removal frees too.
                let sidecars = ["The Daily 2026-11-01", "The Daily 2026-11-03"].reduce(0) { total, name in
                    let path = lib.appendingPathComponent(name).appendingPathComponent("issue.json").path
                    return total + ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int ?? 0)
                }
                #expect(sidecars > 0)
                let real = try run(["prune", "--keep", "2", "--json"], lib)
                #expect(real.status == 0, "\(real.stderr)")
                let planned = try #require(try json(dry.stdout) as? [String: Any])
                let done = try #require(try json(real.stdout) as? [String: Any])
                #expect(planned["dryRun"] as? Bool == true && done["dryRun"] as? Bool == false)
                let names = { (report: [String: Any]) in
                    (report["removed"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                }
                #expect(names(planned) == ["The Daily 2026-11-01", "The Daily 2026-11-03"])
                #expect(names(done) == names(planned))
                #expect(done["bytesFreed"] as? Int == 2 * Self.body.count + sidecars)
                #expect(planned["bytesFreed"] as? Int == done["bytesFreed"] as? Int)
                let spared = try #require(done["spared"] as? [[String: Any]])
                #expect(
                    spared.first?["name"] as? String == "The Daily 2026-11-02"
                        && spared.first?["protection"] as? String == "pinned")
                #expect(
                    Set(try listed(lib).keys) == [
                        "The Daily 2026-11-02", "The Daily 2026-11-04", "The Daily 2026-11-05",
                    ])
                #expect(!FileManager.default.fileExists(atPath: lib.path + "/The Daily 2026-11-01"))

                #expect(try run(["unpin", "The Daily 2026-11-02"], lib).status == 0)
                r = try run(["prune", "--max-bytes", "60K"], lib)
                #expect(r.status == 0)
                #expect(
                    r.stdout.contains("removed \"The Daily 2026-11-02\"")
                        && r.stdout.contains("removed \"The Daily 2026-11-04\""), "\(r.stdout)")
                #expect(Set(try listed(lib).keys) == ["The Daily 2026-11-05"])
                #expect(try run(["verify"], lib).status == 0)
            }
        }
    }

    @Test func usageAndUnknownNames() async throws {
        try await withTemporaryDirectory { lib in
            #expect(try run(["add", "A", "--date", "2026-11-20", "--publication", "Alpha"], lib).status == 0)
            #expect(try run(["prune"], lib).status == 64)
            #expect(try run(["prune", "--keep", "-1"], lib).status == 64)
            #expect(try run(["prune", "--max-bytes", "lots"], lib).status == 64)
            #expect(try run(["pin"], lib).status == 64)
            let r = try run(["pin", "A", "Nope"], lib)
            #expect(r.status == 1 && r.stderr.hasPrefix("error: no issue named \"Nope\""), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            #expect(try listed(lib)["A"]?["pinned"] as? Bool == false, "a failed command changes nothing")
            #expect(try listed(lib)["A"]?["publication"] as? String == "Alpha")
            #expect(try run(["verify", "Nope"], lib).status == 1)
        }
    }

    @Test func importedPublicationsGroupTheKeep() async throws {
        try await withTemporaryDirectory { lib in
            let input = """
                {"publication": "Quarterly", "issues": [
                  {"name": "Spring", "date": "2026-03-01"}, {"name": "Summer", "date": "2026-06-01"},
                  {"name": "Autumn", "date": "2026-09-01"}, {"name": "Gazette A", "date": "2026-01-01", "publication": "Gazette"}]}
                """
            #expect(try CommandRunner.issues(["import", "-"], library: lib, stdin: input).status == 0)
            let r = try run(["prune", "--keep", "1", "--dry-run", "--json"], lib)
            let report = try #require(try json(r.stdout) as? [String: Any])
            let removed = (report["removed"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(removed == ["Spring", "Summer"])
            let exported = try run(["export", "Gazette A"], lib).stdout
            #expect(exported.contains("\"publication\":\"Gazette\""), "\(exported)")
        }
    }

    @Test(arguments: ["prune-marked", "prune-trashed", "prune-deleted"])
    func aKillInsideAPruneLeavesAConsistentLibrary(point: String) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try seed(lib, server)
                let killed = try run(["prune", "--keep", "2"], lib, crashAt: point)
                #expect(killed.signalled, "the kill at \(point) landed inside prune (\(killed.stderr))")
                try expectConsistent(lib, "after the kill at \(point)")
                // Untouched issues are whole; the pinned one too.
                for name in ["The Daily 2026-11-02", "The Daily 2026-11-04", "The Daily 2026-11-05"] {
                    let file = lib.path + "/\(name)/daily.pdf"
                    #expect(
                        FileManager.default.contents(atPath: file).map(Array.init) == Self.body, "\(point): \(name)")
                }
                // The repair finishes what was cut short; then nothing is left to repair.
                let repair = try run(["verify", "--repair"], lib)
                #expect(repair.status == 0, "\(point): \(repair.stdout) \(repair.stderr)")
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(point): \(verify.stdout)")
                try expectConsistent(lib, "after the repair")
                let names = Set(try listed(lib).keys)
                #expect(names.isSuperset(of: ["The Daily 2026-11-02", "The Daily 2026-11-04", "The Daily 2026-11-05"]))
                // A prune run again reaches the same end.
                #expect(try run(["prune", "--keep", "2"], lib).status == 0)
                #expect(
                    Set(try listed(lib).keys) == [
                        "The Daily 2026-11-02", "The Daily 2026-11-04", "The Daily 2026-11-05",
                    ])
                let left = try FileManager.default.contentsOfDirectory(atPath: lib.path).filter { !$0.hasPrefix(".") }
                #expect(
                    Set(left) == [
                        "library.json", "The Daily 2026-11-02", "The Daily 2026-11-04", "The Daily 2026-11-05",
                    ])
                #expect(try run(["verify"], lib).status == 0)
            }
        }
    }

    /// Every command used to delete `.trash` as it opened: a prune or remove in another process that had marked
    /// its issues and was renaming their folders into the trash then failed (ENOENT), its issues stuck "being
    /// removed". A loop of `list` beside eight prunes and eight removes (the finding's eight prunes): every command succeeds, nothing is stuck,
    /// the trash ends empty.
    @Test func aListLoopBesideConcurrentPrunesAndRemovesBreaksNothing() async throws {
        try await withTemporaryDirectory { lib in
            let publications = 8
            let perPublication = 25
            var lines: [String] = []
            for p in 0..<publications {
                for d in 1...perPublication {
                    let day = d < 10 ? "0\(d)" : "\(d)"
                    lines.append("{\"name\":\"P\(p) \(day)\",\"date\":\"2026-01-\(day)\",\"publication\":\"P\(p)\"}")
                }
            }
            let imported = try CommandRunner.issues(["import", "-"], library: lib, stdin: lines.joined(separator: "\n"))
            #expect(imported.status == 0, "\(imported.stderr)")
            // Each issue removed gets content, so that every removal renames a folder into the trash.
            for (name, issue) in try listed(lib) where !name.hasSuffix(" 25") {
                let folder = try #require(issue["directory"] as? String)
                try FileManager.default.createDirectory(atPath: folder + "/pages", withIntermediateDirectories: true)
                try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: folder + "/pages/1.pdf"))
            }
            // Pinned, so that the prunes leave them to the removes.
            let removed = (0..<8).map { "P\($0) 01" }
            #expect(try run(["pin"] + removed, lib).status == 0)

            let stop = lib.path + ".stop"
            let loop = try CommandRunner.start(
                "/bin/sh",
                [
                    "-c",
                    "while [ ! -e \"$2\" ]; do \"$0\" list --library \"$1\" >/dev/null 2>>\"$1.loop-errors\" || echo failed >>\"$1.loop-errors\"; done",
                    CommandRunner.issuesBinary, lib.path, stop,
                ], environment: CommandRunner.environment())
            defer {
                _ = FileManager.default.createFile(atPath: stop, contents: nil)
                try? FileManager.default.removeItem(atPath: lib.path + ".loop-errors")
            }
            // The loop is running before the removals start.
            while !FileManager.default.fileExists(atPath: lib.path + "/.lock") || !loop.process.isRunning {
                try await Task.sleep(for: .milliseconds(20))
            }
            var commands: [RunningCommand] = []
            for i in 0..<8 {
                commands.append(
                    try CommandRunner.start(
                        CommandRunner.issuesBinary, ["prune", "--library", lib.path, "--keep", "1"],
                        environment: CommandRunner.environment()))
                commands.append(
                    try CommandRunner.start(
                        CommandRunner.issuesBinary, ["remove", "--library", lib.path, removed[i]],
                        environment: CommandRunner.environment()))
            }
            for command in commands {
                let r = try await command.wait()
                #expect(r.status == 0, "\(command.process.arguments ?? []): \(r.stdout) \(r.stderr)")
            }
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            _ = try await loop.wait()
            let loopErrors = (try? String(contentsOfFile: lib.path + ".loop-errors", encoding: .utf8)) ?? ""
            #expect(loopErrors.isEmpty, "\(loopErrors)")

            let left = try listed(lib)
            #expect(Set(left.keys) == Set((0..<publications).map { "P\($0) 25" }), "\(left.keys.sorted())")
            #expect(left.values.allSatisfy { $0["removing"] == nil || $0["removing"] as? Bool == false })
            let trash = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.trash")) ?? []
            #expect(trash.filter { $0 != ".lock" }.isEmpty, "\(trash)")
            let folders = try FileManager.default.contentsOfDirectory(atPath: lib.path).filter { !$0.hasPrefix(".") }
            #expect(folders == ["library.json"], "\(folders.sorted())")  // the kept issues had no content
            let verify = try run(["verify"], lib)
            #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        }
    }

    @Test func aKillInsideARepairLeavesARepairableLibrary() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try seed(lib, server)
                // Several kinds of damage, so that the kill lands after the first fix with more to do.
                try FileManager.default.removeItem(atPath: lib.path + "/The Daily 2026-11-03/daily.pdf")
                try Data("x".utf8).write(to: lib.appendingPathComponent(".downloads/00000000deadbeef.part"))
                try SQLiteShell.run(
                    lib.path + "/.catalog/catalog.sqlite",
                    "INSERT INTO pending (asset_id, issue_key) VALUES ('00000000deadbeef', '\(String(repeating: "0", count: 32))')")
                let killed = try run(["verify", "--repair"], lib, crashAt: "repair-step")
                #expect(killed.signalled, "the kill landed inside the repair (\(killed.stderr))")
                let again = try run(["verify", "--repair"], lib)
                #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
                #expect(try run(["verify"], lib).status == 0)
                try expectConsistent(lib, "after a repair killed and run again")
                let resumed = try run(["resume"], lib)
                #expect(resumed.status == 0, "\(resumed.stderr)")
                #expect(
                    FileManager.default.contents(atPath: lib.path + "/The Daily 2026-11-03/daily.pdf").map(Array.init)
                        == Self.body)
                #expect(try run(["verify"], lib).status == 0)
            }
        }
    }

    @Test func anotherProcesssDownloadInFlightIsNeverPruned() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                server.serve("/slow.pdf", bytes: patternBytes(count: 4_000_000))  // 80 s: in flight for the whole test, even under load
                server.setFaults("/slow.pdf", Faults(bytesPerSecond: 50_000))
                #expect(
                    try run(
                        ["add", "Slow 2026-11-01", "--date", "2026-11-01", "--asset", server.url("/slow.pdf")], lib
                    ).status == 0)
                #expect(try run(["add", "Idle 2026-11-02", "--date", "2026-11-02"], lib).status == 0)
                let downloader = try CommandRunner.start(
                    CommandRunner.issuesBinary, ["download", "--library", lib.path],
                    environment: CommandRunner.environment())
                defer { downloader.send(SIGKILL) }
                let downloads = lib.appendingPathComponent(".downloads")
                try await waitUntil("the download to start") {
                    ((try? FileManager.default.contentsOfDirectory(atPath: downloads.path)) ?? []).contains {
                        $0.hasSuffix(".part")
                    }
                }
                let r = try run(["prune", "--older-than", "0", "--json"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                let report = try #require(try json(r.stdout) as? [String: Any])
                let removed = (report["removed"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                let spared = try #require(report["spared"] as? [[String: Any]])
                #expect(removed == ["Idle 2026-11-02"])
                #expect(
                    spared.first?["name"] as? String == "Slow 2026-11-01"
                        && spared.first?["protection"] as? String == "in-flight")
                let v = try run(["verify", "--json"], lib)
                let verify = try #require(try json(v.stdout) as? [String: Any])
                #expect(verify["skippedInFlight"] as? [String] == ["Slow 2026-11-01"], "\(v.stdout)")
                downloader.send(SIGKILL)
                _ = try await downloader.wait()
                #expect(try listed(lib)["Slow 2026-11-01"] != nil)
            }
        }
    }
}
