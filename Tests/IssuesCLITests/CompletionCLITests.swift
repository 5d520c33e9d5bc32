import Foundation
import NewsstandTestSupport
import Testing

/// Issue names complete: the generated scripts ask `issues ---completion …`, which reads the index of the
/// library named on the line being completed.
@Suite(.timeLimit(.minutes(5))) struct CompletionCLITests {
    @Test func issueNamesCompleteFromTheLibraryOnTheLine() async throws {
        try await withTemporaryDirectory { lib in
            for name in ["Weekly One", "Weekly Two", "Daily"] {
                #expect(try CommandRunner.issues(["add", name, "--date", "2026-11-20"], library: lib).status == 0)
            }
            for command in ["show", "path", "remove", "add-asset", "download"] {
                let words = ["issues", command, "--library", lib.path, "Wee"]
                let r = try CommandRunner.run(
                    CommandRunner.issuesBinary,
                    ["---completion", command, "--", "positional@0", "4", "3"] + words,
                    environment: CommandRunner.environment())
                #expect(r.status == 0, "\(command): \(r.stderr)")
                #expect(r.stdout.split(separator: "\n") == ["Weekly One", "Weekly Two"], "\(command): \(r.stdout)")
            }
            // No library there: no names, and nothing printed into the user's command line.
            let r = try CommandRunner.run(
                CommandRunner.issuesBinary,
                ["---completion", "show", "--", "positional@0", "4", "0", "issues", "show", "--library",
                 lib.appendingPathComponent("missing").path, ""],
                environment: CommandRunner.environment())
            #expect(r.stdout.isEmpty && r.stderr.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent("missing").path))
        }
    }
}
