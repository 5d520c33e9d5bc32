import Foundation
import NewsstandTestSupport
import Testing

/// `make install-files` (the copying half of `make install`) into a staged DESTDIR and PREFIX: the binary
/// runs, `man -l` renders the page with the exit statuses and environment variables, and each shell's
/// completion is where that shell looks. The Swift half of `make install` cannot run here: `swift test`
/// holds the build folder's lock, so `make test` generates the man page before the tests start.
@Suite(.timeLimit(.minutes(5))) struct InstallTests {
    @Test func installStagesBinaryManPageAndCompletions() async throws {
        let root = CommandRunner.packageRoot
        let manPage = root.appendingPathComponent(".build/plugins/GenerateManual/outputs/issues/issues.1").path
        try #require(
            FileManager.default.fileExists(atPath: manPage),
            "no generated man page: run `make manual CONFIGURATION=debug` first (`make test` does)")
        try await withTemporaryDirectory { stage in
            let prefix = "/opt/issues-test"
            let make = try CommandRunner.run(
                "/usr/bin/env",
                [
                    "make", "-s", "-C", root.path, "install-files", "DESTDIR=\(stage.path)", "PREFIX=\(prefix)",
                    "ISSUES_BIN=\(CommandRunner.issuesBinary)",
                ])
            #expect(make.status == 0, "\(make.stdout)\(make.stderr)")
            let installed = stage.path + prefix

            let version = try CommandRunner.run(installed + "/bin/issues", ["--version"])
            #expect(version.status == 0 && !version.stdout.isEmpty, "\(version.stderr)")

            let man = try CommandRunner.run(
                "/usr/bin/env", ["man", "-P", "cat", "-l", installed + "/share/man/man1/issues.1"],
                environment: CommandRunner.environment(["MANWIDTH": "80", "LANG": "C.UTF-8"]))
            #expect(man.status == 0, "\(man.stderr)")
            #expect(man.stderr.isEmpty, "man warned: \(man.stderr)")
            let page = man.stdout.replacingOccurrences(of: "\u{2010}\n", with: "")  // hyphenation at line ends
            let exitStatus = try #require(page.range(of: "EXIT STATUS"), "\(page)")
            let statuses = page[exitStatus.upperBound...]
            for code in ["0", "1", "64", "130"] {
                #expect(statuses.contains("     \(code) "), "exit status \(code) missing:\n\(statuses)")
            }
            for variable in [
                "ISSUES_LIBRARY", "XDG_DATA_HOME", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
                "SSL_CERT_FILE", "SSL_CERT_DIR", "COLUMNS",
            ] {
                #expect(page.contains(variable), "\(variable) missing from the man page")
            }

            let bashCompletion = installed + "/share/bash-completion/completions/issues"
            let bash = try CommandRunner.run("/bin/bash", ["-c", "source '\(bashCompletion)' && complete -p issues"])
            #expect(bash.status == 0, "\(bash.stderr)")
            #expect(bash.stdout.contains("issues"), "\(bash.stdout)")
            let zsh = try String(contentsOfFile: installed + "/share/zsh/site-functions/_issues", encoding: .utf8)
            #expect(zsh.hasPrefix("#compdef issues"))
            let fish = try String(
                contentsOfFile: installed + "/share/fish/vendor_completions.d/issues.fish", encoding: .utf8)
            #expect(fish.contains("complete -c 'issues'"))
        }
    }
}
