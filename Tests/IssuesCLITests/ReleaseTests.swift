import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

/// One version source: what `issues --version` prints is `NewsstandInfo.version` (which the `User-Agent`
/// is made from), and the scripts that tag and check a release read that same value and find it in the
/// CHANGELOG.
@Suite(.timeLimit(.minutes(5))) struct ReleaseTests {
    @Test func versionIsTheOneSourceEverywhere() throws {
        let printed = try CommandRunner.run(CommandRunner.issuesBinary, ["--version"])
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == NewsstandInfo.version)

        let root = CommandRunner.packageRoot
        let script = try CommandRunner.run("/bin/bash", [root.appendingPathComponent("Release/version.sh").path])
        #expect(script.status == 0, "\(script.stderr)")
        #expect(script.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == NewsstandInfo.version)

        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(changelog.contains("\n## [\(NewsstandInfo.version)] - "), "CHANGELOG.md has no section for it")
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("from: \"\(NewsstandInfo.version)\""), "the README's dependency line names another version")
        let docc = try String(
            contentsOf: root.appendingPathComponent("Sources/Newsstand/Newsstand.docc/Newsstand.md"), encoding: .utf8)
        #expect(docc.contains("from: \"\(NewsstandInfo.version)\""), "the DocC landing page names another version")
    }

    /// `make release-tag` refuses a dirty tree and a version without a CHANGELOG section, and on a clean
    /// clone creates the annotated tag (in a throw-away clone: the real repository is never tagged).
    @Test func releaseTagChecksBeforeTagging() async throws {
        try await withTemporaryDirectory { dir in
            let root = CommandRunner.packageRoot
            let clone = dir.appendingPathComponent("clone").path
            func git(_ args: [String], in path: String = clone) throws -> CommandResult {
                try CommandRunner.run("/usr/bin/env", ["git", "-C", path] + args)
            }
            // The tree as committed, plus the working copy's release files (what this test checks).
            #expect(try CommandRunner.run("/usr/bin/env", ["git", "clone", "-q", root.path, clone]).status == 0)
            // A released tree carries its own tag, which the clone copies: the test tags afresh.
            _ = try git(["tag", "-d", NewsstandInfo.version])
            for file in ["CHANGELOG.md", "Release/release-tag.sh", "Release/version.sh", "Sources/NewsstandCore/NewsstandInfo.swift"] {
                let data = try Data(contentsOf: root.appendingPathComponent(file))
                try data.write(to: URL(fileURLWithPath: clone + "/" + file))
            }
            let tagScript = clone + "/Release/release-tag.sh"
            let identity = ["-c", "user.name=Release Test", "-c", "user.email=release@example.invalid"]
            _ = try git(["add", "-A"])
            _ = try git(identity + ["commit", "-q", "--allow-empty", "-m", "release files"])

            // A dirty tree is refused.
            try Data("x".utf8).write(to: URL(fileURLWithPath: clone + "/stray.txt"))
            let dirty = try CommandRunner.run("/bin/bash", [tagScript])
            #expect(dirty.status != 0 && dirty.stderr.contains("uncommitted"), "\(dirty.stderr)")
            try FileManager.default.removeItem(atPath: clone + "/stray.txt")

            // A CHANGELOG without the version's section is refused.
            let changelog = try String(contentsOfFile: clone + "/CHANGELOG.md", encoding: .utf8)
            try Data(changelog.replacingOccurrences(of: "## [\(NewsstandInfo.version)]", with: "## [9.9.9]").utf8)
                .write(to: URL(fileURLWithPath: clone + "/CHANGELOG.md"))
            _ = try git(identity + ["commit", "-q", "-am", "no section"])
            let missing = try CommandRunner.run("/bin/bash", [tagScript])
            #expect(missing.status != 0 && missing.stderr.contains("no section"), "\(missing.stderr)")

            // With the section back, the annotated tag is made, carrying the section.
            try Data(changelog.utf8).write(to: URL(fileURLWithPath: clone + "/CHANGELOG.md"))
            _ = try git(identity + ["commit", "-q", "-am", "section back"])
            let tagged = try CommandRunner.run(
                "/usr/bin/env",
                ["GIT_COMMITTER_NAME=Release Test", "GIT_COMMITTER_EMAIL=release@example.invalid", "bash", tagScript])
            #expect(tagged.status == 0, "\(tagged.stderr)")
            let kind = try git(["cat-file", "-t", NewsstandInfo.version])
            #expect(kind.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "tag", "not an annotated tag")
            let again = try CommandRunner.run("/bin/bash", [tagScript])
            #expect(again.status != 0 && again.stderr.contains("exists already"), "\(again.stderr)")
        }
    }
}
