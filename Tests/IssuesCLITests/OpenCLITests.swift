import Foundation
import NewsstandTestSupport
import Testing

/// `issues open` with a fake `xdg-open` on PATH that is as chatty as the real one on a headless machine.
@Suite(.timeLimit(.minutes(5))) struct OpenCLITests {
    /// Writes an executable `xdg-open` into `folder` that records its argument, prints `noise` lines on
    /// both streams, ends with `last` on stderr, and exits with `status`.
    func fakeOpener(in folder: URL, status: Int, last: String) throws {
        let script = """
            #!/bin/sh
            printf '%s\\n' "$1" > "$(dirname "$0")/opened"
            for i in 1 2 3 4 5 6 7 8; do echo "xdg-mime: noise line $i"; echo "gio: more noise $i" >&2; done
            echo '\(last)' >&2
            exit \(status)
            """
        let path = folder.appendingPathComponent("xdg-open").path
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }

    func open(_ lib: URL, bin: URL) throws -> CommandResult {
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        _ = try CommandRunner.issues(["add", "Weekly 47", "--date", "2026-11-20"], library: lib)
        return try CommandRunner.issues(["open", "Weekly 47"], library: lib, environment: ["PATH": path])
    }

    @Test func successKeepsTheOpenersOutputOffTheTerminal() async throws {
        try await withTemporaryDirectory { bin in
            try fakeOpener(in: bin, status: 0, last: "opened")
            try await withTemporaryDirectory { lib in
                let r = try open(lib, bin: bin)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout.isEmpty, "\(r.stdout)")
                #expect(r.stderr.isEmpty, "\(r.stderr)")
                let opened = try String(contentsOf: bin.appendingPathComponent("opened"), encoding: .utf8)
                #expect(opened == lib.appendingPathComponent("Weekly 47").path + "\n")
            }
        }
    }

    @Test func failureShowsOneLineAndThePath() async throws {
        try await withTemporaryDirectory { bin in
            try fakeOpener(in: bin, status: 3, last: "xdg-open: no method available for opening the folder")
            try await withTemporaryDirectory { lib in
                let r = try open(lib, bin: bin)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout == lib.appendingPathComponent("Weekly 47").path + "\n")
                let lines = r.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(r.stderr)")
                #expect(
                    lines.first
                        == "warning: xdg-open exited with status 3: xdg-open: no method available for opening the folder; the folder is:"
                )
                #expect(!r.stderr.contains("noise") && !r.stdout.contains("noise"))
            }
        }
    }
}
