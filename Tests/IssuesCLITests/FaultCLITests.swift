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
    /// of any kind (here `list`) empties it, not only a later download with work. The folder and its lock
    /// stay (a removal in another process may be renaming into it).
    @Test func anyCommandEmptiesTheTrash() async throws {
        try await withTemporaryDirectory { lib in
            _ = try CommandRunner.issues(["add", "Kept", "--date", "2026-11-20"], library: lib)
            let leftover = lib.path + "/.trash/Gone-1234/deep/er"
            try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: URL(fileURLWithPath: leftover + "/file.pdf"))
            let list = try CommandRunner.issues(["list"], library: lib)
            #expect(list.status == 0, "\(list.stderr)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.trash")) ?? []
            #expect(left.filter { $0 != ".lock" }.isEmpty, "\(left)")
        }
    }
}

extension FaultCLITests {
    /// Two archives of 1,000 files in 10 folders unpacked into one issue under `ulimit -n 64`: the
    /// extraction and the merge hold a bounded number of descriptors, so every file arrives.
    @Test func unpackingUnderALowOpenFileLimitPlacesEveryFile() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { folder in
                for (index, name) in ["/one.zip", "/two.tar.gz"].enumerated() {
                    let path = folder.path + name
                    try ArchiveFixtures.manySmallFiles(
                        count: 1_000, bytesEach: 10 + index, format: index == 0 ? .zip : .tarGzip, to: path)
                    server.serve(name, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
                }
                let lib = folder.appendingPathComponent("lib")
                _ = try CommandRunner.issues(
                    [
                        "add", "Many", "--date", "2026-11-20", "--asset", server.url("/one.zip"), "--asset",
                        server.url("/two.tar.gz"),
                    ], library: lib)
                let result = try CommandRunner.run(
                    "/bin/sh",
                    ["-c", "ulimit -n 64 && exec \"$0\" download --library \"$1\"", CommandRunner.issuesBinary, lib.path],
                    environment: CommandRunner.environment())
                #expect(result.status == 0, "\(result.stderr)")
                let path = try CommandRunner.issues(["path", "Many"], library: lib).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                // The two archives hold the same names; the assets run concurrently, so either may be merged
                // last. What must hold: every name is there, whole, from one archive or the other.
                for name in ArchiveFixtures.manySmallFileNames(count: 1_000) {
                    let size = (try? FileManager.default.attributesOfItem(atPath: path + "/" + name))?[.size] as? Int
                    #expect(size == 10 || size == 11, "\(name): \(String(describing: size))")
                    if size != 10 && size != 11 { break }
                }
            }
        }
    }
}
