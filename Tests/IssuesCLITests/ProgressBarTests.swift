import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// On a terminal, `download` draws live progress bars (bytes, rate, ETA) on stderr.
@Suite(.timeLimit(.minutes(5))) struct ProgressBarTests {
    @Test func terminalGetsLiveBars() async throws {
        let script = "/usr/bin/script"
        try #require(
            FileManager.default.isExecutableFile(atPath: script),
            "util-linux `script` is needed to give the CLI a terminal")
        try await withTestServer { server in
            server.serve("/slow.bin", bytes: patternBytes(count: 1_500_000))
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 1_000_000))
            try await withTemporaryDirectory { lib in
                _ = try CommandRunner.issues(
                    ["add", "Slow", "--date", "2026-11-20", "--asset", server.url("/slow.bin")], library: lib)
                let command = "'\(CommandRunner.issuesBinary)' download --library '\(lib.path)'"
                // `script` runs the command on a pseudo-terminal and copies everything it printed.
                let r = try CommandRunner.run(
                    script, ["-qfec", command, "/dev/null"], environment: CommandRunner.environment(["TERM": "xterm"]))
                #expect(r.status == 0, "\(r.stdout)")
                #expect(r.stdout.contains("\u{1B}["), "cursor movement for redrawing the bars")
                #expect(r.stdout.contains("ETA"), "\(r.stdout)")
                #expect(r.stdout.contains("%"))
                #expect(r.stdout.contains("1 done"))
            }
        }
    }
}
