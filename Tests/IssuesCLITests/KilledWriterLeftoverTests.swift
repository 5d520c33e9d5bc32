import Foundation
import NewsstandTestSupport
import Testing

/// What a process killed at the worst instant leaves behind must be cleaned by the library's own recovery,
/// not only by `verify --repair`: `issues verify` is clean right after the next ordinary command. Real
/// `issues` processes; the debug build dies at the named crash point when `ISSUES_CRASH_AT` names it. Both
/// were found by `make soak`.
@Suite(.timeLimit(.minutes(5))) struct KilledWriterLeftoverTests {
    static let body = patternBytes(count: 20_000, seed: 7)
    static let names = (1...4).map { "Weekly 2026-11-0\($0)" }

    func run(_ args: [String], _ lib: URL, crashAt point: String? = nil) throws -> CommandResult {
        try CommandRunner.issues(args, library: lib, environment: point.map { ["ISSUES_CRASH_AT": $0] } ?? [:])
    }

    /// The lock files in `.staging` (one per issue whose folder something placed into or removed).
    func lockFiles(_ lib: URL) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.staging")) ?? []
        return Set(names.filter { $0.hasSuffix(".lock") })
    }

    /// The content records in `.catalog/content` (one per unpacked asset).
    func contentRecords(_ lib: URL) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.catalog/content")) ?? []).filter {
            $0.hasSuffix(".json")
        }.count
    }

    /// A kill after the removal's catalog change committed and before its clean-up used to leave the lock files
    /// of the removed issues in `.staging` and the content records of their unpacked assets in
    /// `.catalog/content` (nothing would ever delete them but `verify --repair`).
    @Test(arguments: [
        (["prune", "--keep", "2"], "prune-deleted"), (["remove", "Weekly 2026-11-01"], "remove-deleted"),
    ])
    func aRemovalKilledAfterItsCommitLeavesNoLockFile(command: [String], point: String) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                server.serve("/weekly.pdf", bytes: Self.body)
                let zip = lib.path + "-pages.zip"
                defer { try? FileManager.default.removeItem(atPath: zip) }
                try ArchiveFixtures.write(
                    [.file("pages/1.html", Array("<h1>One</h1>".utf8)), .file("pages/2.html", patternBytes(count: 3000))],
                    format: .zip, to: zip)
                server.serve("/pages.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                for (day, name) in Self.names.enumerated() {
                    let r = try run(
                        [
                            "add", name, "--date", "2026-11-0\(day + 1)", "--asset", server.url("/weekly.pdf"), "--asset",
                            server.url("/pages.zip"),
                        ], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                let d = try run(["download", "--no-covers"], lib)
                #expect(d.status == 0, "\(d.stderr)")
                #expect(lockFiles(lib) == Set(Self.names.map { "\($0).lock" }), "placing made a lock file each")
                #expect(contentRecords(lib) == Self.names.count, "unpacking made a content record each")

                let killed = try run(command, lib, crashAt: point)
                #expect(killed.signalled, "the kill at \(point) landed inside \(command[0]) (\(killed.stderr))")
                let gone = command[0] == "prune" ? Array(Self.names.prefix(2)) : ["Weekly 2026-11-01"]
                let list = try run(["list"], lib)
                #expect(list.status == 0, "\(list.stderr)")
                for name in gone { #expect(!list.stdout.contains(name), "\(point): \(name) is still listed") }
                // The removed issues' lock files went with the change that removed them.
                #expect(lockFiles(lib) == Set(Self.names.map { "\($0).lock" }).subtracting(gone.map { "\($0).lock" }))
                // And the content records of their unpacked ZIPs (one an issue).
                #expect(contentRecords(lib) == Self.names.count - gone.count, "\(point)")
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(point): \(verify.stdout) \(verify.stderr)")
            }
        }
    }
}
