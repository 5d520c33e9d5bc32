import Foundation
import NewsstandTestSupport
import Testing

/// `issues mark` and `issues open` keep the shelf's new/read state (`.read-state.json`).
@Suite(.timeLimit(.minutes(5))) struct MarkCLITests {
    func readNames(_ lib: URL) throws -> [String] {
        let data = try Data(contentsOf: lib.appendingPathComponent(".read-state.json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["read"] as? [String] ?? []
    }

    @Test func markReadAndUnread() async throws {
        try await withTemporaryDirectory { lib in
            _ = try CommandRunner.issues(["add", "Weekly 47", "--date", "2026-11-20"], library: lib)
            var r = try CommandRunner.issues(["mark", "Weekly 47", "--read"], library: lib)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout == "marked \"Weekly 47\" read\n")
            #expect(try readNames(lib) == ["Weekly 47"])
            r = try CommandRunner.issues(["mark", "Weekly 47", "--unread"], library: lib)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try readNames(lib).isEmpty)
            r = try CommandRunner.issues(["mark", "Missing"], library: lib)
            #expect(r.status == 1)
            #expect(r.stderr.hasPrefix("error: "))
            r = try CommandRunner.issues(["mark", "Weekly 47", "--read", "--unread"], library: lib)
            #expect(r.status == 64)
        }
    }

    @Test func openMarksRead() async throws {
        try await withTemporaryDirectory { lib in
            _ = try CommandRunner.issues(["add", "Weekly 47", "--date", "2026-11-20"], library: lib)
            // No opener on PATH: `open` prints the folder, and the issue is read all the same.
            let r = try CommandRunner.issues(["open", "Weekly 47"], library: lib, environment: ["PATH": "/nonexistent"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try readNames(lib) == ["Weekly 47"])
        }
    }
}
