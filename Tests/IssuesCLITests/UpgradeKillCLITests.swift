import Foundation
import NewsstandTestSupport
import Testing

/// The upgrade of a version-3 library (written as releases before 0.5 laid it out, by
/// `Fixtures/make_v3_library.py`) under `kill -9`, through real `issues` processes. A suite of its own: `make
/// upgrade-kills` runs it at 100,000 issues and 20 points, past the other suites' five minutes.
@Suite(.timeLimit(.minutes(60))) struct UpgradeKillCLITests {
    func run(_ args: [String], _ lib: URL) throws -> CommandResult {
        try CommandRunner.issues(args, library: lib)
    }

    /// A version-3 library of 1,000 issues (two assets each, ten saved downloads, 30 events) killed at random
    /// points of its upgrade (among its rows, after the database is built, after the commit): each time the next
    /// command finishes it with every issue, saved download and event, and nothing of the old catalog left.
    /// `ISSUES_KILL_SEED` repeats a run; `make upgrade-kills` does it at 20 points on 100,000 issues.
    @Test func aKillAnywhereInTheVersionThreeUpgradeLosesNothing() async throws {
        let count = Int(ProcessInfo.processInfo.environment["ISSUES_UPGRADE_COUNT"] ?? "") ?? 1_000
        let kills = Int(ProcessInfo.processInfo.environment["ISSUES_UPGRADE_KILLS"] ?? "") ?? 6
        var rng = SeededGenerator(state: UInt64(ProcessInfo.processInfo.environment["ISSUES_KILL_SEED"] ?? "") ?? 2026)
        try await withTemporaryDirectory { root in
            let script = CommandRunner.packageRoot.appendingPathComponent("Tests/IssuesCLITests/Fixtures/make_v3_library.py")
            for round in 0..<kills {
                let lib = root.appendingPathComponent("lib\(round)")
                let made = try CommandRunner.run(
                    "/usr/bin/env", ["python3", script.path, lib.path, String(count), "--pending", "10", "--events", "30"])
                #expect(made.status == 0, "\(made.stderr)")
                // Rows are counted in hundreds; the last two points are after the build and after the commit.
                let pick = Int.random(in: 0..<(count / 100 + 2), using: &rng)
                let (point, after) =
                    pick < count / 100 ? ("upgrade-rows", pick + 1) : (pick == count / 100 ? "upgrade-built" : "upgrade-committed", 1)
                let killed = try CommandRunner.issues(
                    ["list"], library: lib, environment: ["ISSUES_CRASH_AT": point, "ISSUES_CRASH_AFTER": String(after)])
                #expect(killed.signalled, "round \(round): the kill at \(point) #\(after) landed")
                let listedNow = try run(["list", "--json"], lib)
                #expect(listedNow.status == 0, "\(listedNow.stderr)")
                let issues = try #require(try JSONSerialization.jsonObject(with: Data(listedNow.stdout.utf8)) as? [[String: Any]])
                #expect(issues.count == count, "round \(round) (\(point) #\(after))")
                let database = lib.path + "/.catalog/catalog.sqlite"
                #expect(try SQLiteShell.run(database, "SELECT count(*), (SELECT count(*) FROM events), (SELECT max(cursor) FROM events) FROM pending") == "10|30|30\n")
                let left = try FileManager.default.contentsOfDirectory(atPath: lib.path + "/.catalog").sorted()
                #expect(left.allSatisfy { $0.hasPrefix("catalog.sqlite") }, "round \(round): \(left)")
            }
        }
    }
}
