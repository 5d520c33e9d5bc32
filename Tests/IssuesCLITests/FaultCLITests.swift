import Foundation
import NewsstandTestSupport
import Testing

/// Hostile servers against the built `issues` binary, as real processes.
@Suite struct FaultCLITests {
    /// `--stall-bytes`/`--stall-seconds`: a server trickling 20 bytes a second is given up on, the
    /// failure is stored in the catalog, and the command ends in seconds.
    @Test func aTricklingServerIsGivenUpOnByTheStallLimit() async throws {
        try await withTestServer { server in
            server.serve("/slow.pdf", bytes: patternBytes(count: 50_000))
            server.setFaults("/slow.pdf", Faults(bytesPerSecond: 20))
            try await withTemporaryDirectory { lib in
                _ = try CommandRunner.issues(
                    ["add", "Slow", "--date", "2026-11-20", "--asset", server.url("/slow.pdf")], library: lib)
                let started = ContinuousClock.now
                let result = try CommandRunner.issues(
                    ["download", "--stall-bytes", "1K", "--stall-seconds", "1", "--retries", "1"], library: lib)
                #expect(ContinuousClock.now - started < .seconds(20))
                #expect(result.status != 0)
                #expect(result.stderr.contains("stalled"), "\(result.stderr)")
                let show = try CommandRunner.issues(["show", "Slow"], library: lib)
                #expect(show.stdout.contains("stalled"), "\(show.stdout)")
                #expect(!show.stdout.contains("downloading"), "\(show.stdout)")
            }
        }
    }
}

extension FaultCLITests {
    /// A removal killed after the catalog let go of the folder leaves it in `.trash`: the next command
    /// of any kind (here `list`) empties it, not only a later download with work.
    @Test func anyCommandEmptiesTheTrash() async throws {
        try await withTemporaryDirectory { lib in
            _ = try CommandRunner.issues(["add", "Kept", "--date", "2026-11-20"], library: lib)
            let leftover = lib.path + "/.trash/Gone-1234/deep/er"
            try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: URL(fileURLWithPath: leftover + "/file.pdf"))
            let list = try CommandRunner.issues(["list"], library: lib)
            #expect(list.status == 0, "\(list.stderr)")
            #expect(!FileManager.default.fileExists(atPath: lib.path + "/.trash"))
        }
    }
}
