import Foundation
import NewsstandTestSupport
import Testing

/// Installed by `make test-deps`; the suite is skipped without it.
private let straceBinary = "/usr/bin/strace"

/// The order of the system calls that make a placed asset survive a power cut, read from `strace` of the
/// real binary: the flush of what was placed comes after the last move into the issue's folder and before
/// the first write of a record that says so; with `--no-fsync` there is none.
@Suite(.timeLimit(.minutes(5)), .enabled(if: FileManager.default.isExecutableFile(atPath: straceBinary)))
struct FlushOrderCLITests {
    static let strace = straceBinary

    /// One system call, at the line of the trace where it returned.
    struct Call {
        var line: Int
        var name: String
        var text: String
    }

    /// Runs `issues download` (plus `extra`) under `strace -f -y` and returns its flushes, renames, links and
    /// writes, in the order they returned.
    func tracedDownload(_ lib: URL, _ extra: [String]) throws -> (calls: [Call], said: String) {
        let trace = lib.deletingLastPathComponent().appendingPathComponent("trace-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: trace) }
        let r = try CommandRunner.run(
            Self.strace,
            [
                "-f", "-qq", "-y", "-s", "65536", "-o", trace.path, "-e",
                "trace=syncfs,fsync,fdatasync,rename,renameat,renameat2,link,linkat,write", "--",
                CommandRunner.issuesBinary, "download", "--library", lib.path, "--no-covers",
            ] + extra, environment: CommandRunner.environment())
        #expect(r.status == 0, "\(r.stderr)")
        let said = "download said: \(r.stdout) \(r.stderr.suffix(2000))"
        var calls: [Call] = []
        var pending: [String: String] = [:]
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        for (index, line) in lines.enumerated() {
            // `PID call(...)`, the PID padded with spaces on both sides when it is short (` 5305  rename(`).
            let parts = line.drop { $0 == " " }.split(separator: " ", maxSplits: 1).map(String.init)
            let numbered = parts.count == 2 && parts[0].allSatisfy(\.isNumber)
            let (pid, rest) = numbered ? (parts[0], String(parts[1].drop { $0 == " " })) : ("", line)
            if rest.hasSuffix("<unfinished ...>") {
                pending[pid] = rest
            } else if rest.hasPrefix("<... "), let started = pending.removeValue(forKey: pid) {
                calls.append(Call(line: index, name: String(started.prefix { $0 != "(" }), text: started + rest))
            } else {
                calls.append(Call(line: index, name: String(rest.prefix { $0 != "(" }), text: rest))
            }
        }
        let moves = lines.filter { $0.contains("link") || $0.contains("rename") }.prefix(12).joined(separator: "\n")
        return (calls, said + " (\(lines.count) lines traced; moves:\n\(moves))")
    }

    @Test func anUnpackedTreeIsFlushedBeforeItIsRecorded() async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("issue.zip").path
            try ArchiveFixtures.write(
                [
                    .directory("pages/"), .file("pages/one.html", Array("<h1>One</h1>".utf8)),
                    .file("pages/two.bin", patternBytes(count: 50_000)), .file("index.html", Array("<a>".utf8)),
                ], format: .zip, to: zip)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: zip)))
            try await withTestServer { server in
                server.serve("/issue.zip", bytes: bytes)
                for flushing in [true, false] {
                    try await withTemporaryDirectory { folder in
                        let lib = folder.resolvingSymlinksInPath().appendingPathComponent("lib")
                        let added = try CommandRunner.issues(
                            ["add", "Daily", "--date", "2026-11-20", "--asset", server.url("/issue.zip")], library: lib)
                        #expect(added.status == 0, "\(added.stderr)")
                        let (calls, said) = try tracedDownload(lib, flushing ? [] : ["--no-fsync"])
                        let issueFolder = "\(lib.path)/Daily>"
                        let lastMove = try #require(
                            calls.lastIndex { $0.name.hasPrefix("rename") && $0.text.contains("/.staging/") && $0.text.contains(issueFolder) }, "\(said)")
                        let recorded = try #require(
                            calls.firstIndex { $0.name == "write" && $0.text.contains("<\(lib.path)/") && $0.text.contains("unpacked") }, "\(said)")
                        try #require(lastMove < recorded)
                        let flushes = calls[lastMove..<recorded].filter { $0.name == "syncfs" }
                        #expect(flushes.count == (flushing ? 1 : 0), "\(flushes.map(\.text))")
                        #expect(FileManager.default.fileExists(atPath: lib.path + "/Daily/pages/two.bin"))
                    }
                }
            }
        }
    }

    @Test func aPlacedFilesFolderEntryIsFlushedBeforeItIsRecorded() async throws {
        try await withTestServer { server in
            server.serve("/notes.txt", bytes: Array("plain text, not an archive\n".utf8))
            for flushing in [true, false] {
                try await withTemporaryDirectory { folder in
                    let lib = folder.resolvingSymlinksInPath().appendingPathComponent("lib")
                    let added = try CommandRunner.issues(
                        ["add", "Plain", "--date", "2026-11-20", "--asset", server.url("/notes.txt")], library: lib)
                    #expect(added.status == 0, "\(added.stderr)")
                    let (calls, said) = try tracedDownload(lib, flushing ? [] : ["--no-fsync"])
                    let placed = try #require(
                        calls.lastIndex { $0.name.hasPrefix("link") && $0.text.contains(".done") && $0.text.contains("/Plain/notes.txt") }, "\(said)")
                    let recorded = try #require(
                        calls.firstIndex { $0.name == "write" && $0.text.contains("<\(lib.path)/") && $0.text.contains("downloaded") }, "\(said)")
                    try #require(placed < recorded)
                    let flushes = calls[placed..<recorded].filter {
                        $0.name == "fsync" && $0.text.hasPrefix("fsync(") && $0.text.contains("<\(lib.path)/Plain>")
                    }
                    #expect(flushes.count == (flushing ? 1 : 0), "\(flushes.map(\.text))")
                }
            }
        }
    }
}
