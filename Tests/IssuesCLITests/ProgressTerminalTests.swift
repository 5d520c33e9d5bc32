import Foundation
import NewsstandTestSupport
import Testing

/// `download` progress on real pseudo-terminals of several sizes (and on a pipe), replayed on a screen
/// model (`Fixtures/pty_screen.py`) to check what the user is left looking at: no wrapped line, no
/// stale bar, a summary that starts in the first column and counts the bytes fetched.
@Suite(.timeLimit(.minutes(5))) struct ProgressTerminalTests {
    /// What `pty_screen.py` reports about one run.
    struct ScreenRun: Decodable {
        var status: Int
        var screen: [String]
        var wrapped: Bool
        var maxColumn: Int
        var escapes: Bool
        var unknown: [String]
        var raw: String

        enum CodingKeys: String, CodingKey {
            case status, screen, wrapped, escapes, unknown, raw
            case maxColumn = "max_column"
        }
    }

    static let wideName = "東京マガジン 2026年11月号 特別編集版"
    static let longFile = "a-rather-long-file-name-for-the-progress-line.pdf"

    /// Serves two throttled assets (one under a long, wide name) and adds them to `lib`.
    func prepare(_ server: TestHTTPServer, _ lib: URL, bytes: Int = 600_000, rate: Int = 400_000) throws {
        for path in ["/\(Self.longFile)", "/slow.bin"] {
            server.serve(path, bytes: patternBytes(count: bytes))
            server.setFaults(path, Faults(bytesPerSecond: rate))
        }
        for (name, path) in [(Self.wideName, "/\(Self.longFile)"), ("Slow", "/slow.bin")] {
            let r = try CommandRunner.issues(
                ["add", name, "--date", "2026-11-20", "--asset", server.url(path)], library: lib)
            try #require(r.status == 0, "\(r.stderr)")
        }
    }

    /// Runs `issues download` on a pseudo-terminal `columns` wide.
    func downloadOnTerminal(
        _ lib: URL, columns: Int, environment extra: [String: String], interruptAfter: String? = nil,
        interruptCount: Int = 1
    ) throws -> ScreenRun {
        let script = CommandRunner.packageRoot.appendingPathComponent("Tests/IssuesCLITests/Fixtures/pty_screen.py")
        var args = [script.path, "--cols", "\(columns)", "--rows", "24"]
        if let interruptAfter {
            args += ["--interrupt-after", interruptAfter, "--interrupt-count", "\(interruptCount)"]
        }
        args += ["--", CommandRunner.issuesBinary, "download", "--library", lib.path]
        var environment = CommandRunner.environment()
        // The terminal's own size is under test; a COLUMNS from the calling shell would override it.
        for key in ["COLUMNS", "LINES", "LC_ALL", "LC_CTYPE", "ISSUES_PROGRESS_INTERVAL"] { environment[key] = nil }
        environment.merge(extra) { $1 }
        let r = try CommandRunner.run("/usr/bin/env", ["python3"] + args, environment: environment)
        try #require(r.status == 0, "pty_screen.py failed: \(r.stderr)")
        return try JSONDecoder().decode(ScreenRun.self, from: Data(r.stdout.utf8))
    }

    /// The checks every live run shares: fitted lines, known escapes, and a final screen of log lines
    /// and the summary only.
    func expectClean(_ run: ScreenRun, columns: Int, summaryPrefix: String) {
        #expect(!run.wrapped, "a line wrapped at \(columns) columns:\n\(run.raw)")
        #expect(run.maxColumn <= columns - 1, "wrote up to column \(run.maxColumn) of \(columns)")
        #expect(run.unknown.isEmpty, "escape sequences the screen model does not know: \(run.unknown)")
        let bars = ["█", "░", "[#", "ETA", "%", "^C"]
        for row in run.screen {
            #expect(!bars.contains { row.contains($0) }, "stale progress on the last screen: \(row)\n\(run.screen)")
        }
        #expect(run.screen.contains { $0.hasPrefix(summaryPrefix) }, "no summary in column 1: \(run.screen)")
    }

    @Test(arguments: [40, 80, 200])
    func liveBarsFitTheTerminal(columns: Int) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try prepare(server, lib)
                let run = try downloadOnTerminal(
                    lib, columns: columns, environment: ["TERM": "xterm", "LANG": "C.UTF-8"])
                #expect(run.status == 0, "\(run.raw)")
                #expect(run.raw.contains("█"), "UTF-8 bars on a UTF-8 terminal")
                expectClean(run, columns: columns, summaryPrefix: "2 done; 1.1 MiB fetched")
                #expect(run.screen.contains { $0.hasPrefix("done ") })
                // A done line keeps where the file went, however narrow the terminal: the label gives way.
                let done = run.screen.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("done ") }
                #expect(done.contains { $0.hasSuffix(columns >= 80 ? Self.longFile + ")" : "progress-line.pdf)") }, "\(done)")
                #expect(done.contains { $0.hasSuffix("saved as slow.bin)") && !$0.hasPrefix("done  (") }, "\(done)")
                if columns >= 200 {
                    #expect(run.raw.contains("ETA"), "room for every figure at 200 columns")
                    #expect(run.raw.contains(Self.wideName + ": " + Self.longFile), "no need to clip the label")
                }
            }
        }
    }

    /// `COLUMNS` overrides the size the terminal reports.
    @Test func columnsVariableOverridesTheTerminal() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try prepare(server, lib, bytes: 300_000)
                let run = try downloadOnTerminal(
                    lib, columns: 200, environment: ["TERM": "xterm", "LANG": "C.UTF-8", "COLUMNS": "50"])
                #expect(run.status == 0, "\(run.raw)")
                #expect(run.maxColumn <= 49, "wrote up to column \(run.maxColumn) with COLUMNS=50")
            }
        }
    }

    /// A locale that is not UTF-8 gets ASCII bars and ellipses; the output is then pure ASCII (the names
    /// here are ASCII too).
    @Test func asciiBarsOutsideUTF8() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                server.serve("/slow.bin", bytes: patternBytes(count: 600_000))
                server.setFaults("/slow.bin", Faults(bytesPerSecond: 400_000))
                _ = try CommandRunner.issues(
                    [
                        "add", "A very long issue name that cannot fit", "--date", "2026-11-20", "--asset",
                        server.url("/slow.bin"),
                    ], library: lib)
                // LC_ALL, not LANG: with LANG=C alone, python3 (PEP 538) would set LC_CTYPE=C.UTF-8 for its child.
                let run = try downloadOnTerminal(lib, columns: 40, environment: ["TERM": "xterm", "LC_ALL": "C"])
                #expect(run.status == 0, "\(run.raw)")
                #expect(run.raw.unicodeScalars.allSatisfy { $0.isASCII }, "\(run.raw)")
                #expect(run.raw.contains("[#") || run.raw.contains("[-"), "ASCII bar: \(run.raw)")
                expectClean(run, columns: 40, summaryPrefix: "1 done;")
            }
        }
    }

    /// `TERM=dumb`: no escape sequence at all, plain lines, and periodic lines fitted to the width.
    @Test func dumbTerminalGetsPlainLines() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try prepare(server, lib)
                let run = try downloadOnTerminal(
                    lib, columns: 60,
                    environment: ["TERM": "dumb", "LANG": "C.UTF-8", "ISSUES_PROGRESS_INTERVAL": "0.3"])
                #expect(run.status == 0, "\(run.raw)")
                #expect(!run.escapes, "cursor movement on a dumb terminal: \(run.raw.debugDescription)")
                #expect(run.screen.contains { $0.hasPrefix("downloading Slow: slow.bin") }, "\(run.screen)")
                let periodic = run.screen.filter { $0.hasPrefix("Slow: slow.bin: ") && $0.contains("%") }
                #expect(!periodic.isEmpty, "no periodic progress line: \(run.screen)")
                #expect(!run.wrapped, "\(run.raw)")
                #expect(run.screen.contains { $0.hasPrefix("2 done;") })
            }
        }
    }

    /// Ctrl-C in the middle: exit 130, the bars are gone, the summary starts in column 1 (no `Bi0 done`)
    /// and counts the bytes fetched by the interrupted transfers.
    @Test func controlCLeavesACleanLastFrame() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                try prepare(server, lib, bytes: 4_000_000, rate: 500_000)
                // Several redraws of both bars first.
                let run = try downloadOnTerminal(
                    lib, columns: 80, environment: ["TERM": "xterm", "LANG": "C.UTF-8"], interruptAfter: "\u{1B}[J",
                    interruptCount: 8)
                #expect(run.status == 130, "\(run.raw)")
                expectClean(run, columns: 80, summaryPrefix: "0 done, 2 interrupted; ")
                let summary = try #require(run.screen.first { $0.hasPrefix("0 done") })
                #expect(!summary.contains("; 0 B fetched"), "interrupted bytes not counted: \(summary)")
                #expect(run.screen.contains { $0.hasPrefix("interrupted: partial files are kept") })
            }
        }
    }

    /// With stderr on a pipe (a CI log), a long transfer still shows a line every interval.
    @Test func pipeGetsPeriodicLines() async throws {
        try await withTestServer { server in
            server.serve("/slow.bin", bytes: patternBytes(count: 800_000))
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 400_000))
            try await withTemporaryDirectory { lib in
                _ = try CommandRunner.issues(
                    ["add", "Slow", "--date", "2026-11-20", "--asset", server.url("/slow.bin")], library: lib)
                let r = try CommandRunner.issues(
                    ["download"], library: lib, environment: ["ISSUES_PROGRESS_INTERVAL": "0.4"])
                #expect(r.status == 0, "\(r.stderr)")
                let lines = r.stderr.split(separator: "\n")
                let periodic = lines.filter { $0.hasPrefix("Slow: slow.bin: ") && $0.contains("/781 KiB") }
                #expect(periodic.count >= 2, "\(r.stderr)")
                #expect(lines.first?.hasPrefix("downloading Slow: slow.bin") == true)
                #expect(lines.last?.hasPrefix("done Slow: slow.bin") == true)
                #expect(!r.stderr.contains("\u{1B}"))
            }
        }
    }
}
