import Foundation
import NewsstandTestSupport
import Testing

/// The config files: the library's over the user's, the command line over both, `hooks` and `serve`
/// passed over, a bad file named with its line, and the cron case (a private CA set once in the file,
/// then a plain `issues sync` works).
@Suite(.timeLimit(.minutes(5))) struct ConfigCLITests {
    /// Runs `issues` with its user config folder inside `folder`, so no real ~/.config is read.
    func run(_ args: [String], library: URL, configHome: URL) throws -> CommandResult {
        try CommandRunner.issues(args, library: library, environment: ["XDG_CONFIG_HOME": configHome.path])
    }

    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func settings(_ r: CommandResult) throws -> [String: (value: String?, source: String)] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        var result: [String: (String?, String)] = [:]
        for row in object["settings"] as? [[String: Any]] ?? [] {
            guard let key = row["key"] as? String, let source = row["source"] as? String else { continue }
            result[key] = (row["value"] as? String, source)
        }
        return result
    }

    @Test func libraryFileWinsOverUserFileAndCommandLineOverBoth() async throws {
        try await withTemporaryDirectory { folder in
            let library = folder.appendingPathComponent("library")
            let configHome = folder.appendingPathComponent("xdg")
            let userFile = configHome.appendingPathComponent("issues/config.json").path
            let libraryFile = library.appendingPathComponent("config.json").path
            try write(#"{"jobs": 3, "segments": 2, "limit-rate": "1M", "no-proxy": "localhost"}"#, to: userFile)
            // hooks and serve belong to other parts of the program: accepted and left alone.
            try write(
                """
                {
                  "jobs": 6,
                  "headers": {"Example.COM": {"Authorization": "Bearer s3cret-in-config"}},
                  "hooks": [{"event": "issue.added", "run": ["/bin/true"]}],
                  "serve": {"listen": "127.0.0.1:8765"}
                }
                """, to: libraryFile)
            var r = try run(["config", "--json"], library: library, configHome: configHome)
            #expect(r.status == 0, "\(r.stderr)")
            var s = try settings(r)
            #expect(s["jobs"]?.value == "6" && s["jobs"]?.source == libraryFile)
            #expect(s["segments"]?.value == "2" && s["segments"]?.source == userFile)
            #expect(s["limit-rate"]?.value == "1M" && s["limit-rate"]?.source == userFile)
            #expect(s["no-proxy"]?.value == "localhost" && s["no-proxy"]?.source == userFile)
            #expect(s["cacert"]?.value == nil && s["cacert"]?.source == "built-in default")
            #expect(s["headers example.com"]?.value == "Authorization: Bearer …(redacted)")
            #expect(!r.stdout.contains("s3cret-in-config"))

            r = try run(["config", "--json", "--jobs", "2", "--limit-rate", "500K"], library: library, configHome: configHome)
            s = try settings(r)
            #expect(s["jobs"]?.value == "2" && s["jobs"]?.source == "command line")
            #expect(s["limit-rate"]?.value == "500K" && s["limit-rate"]?.source == "command line")
            #expect(s["segments"]?.source == userFile)

            // The text form names each source too.
            r = try run(["config"], library: library, configHome: configHome)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("jobs") && r.stdout.contains(libraryFile), "\(r.stdout)")
            #expect(r.stdout.contains("read \(userFile)"), "\(r.stdout)")
        }
    }

    @Test(arguments: [
        ("{\n  \"jobs\": 8,\n  \"segments\": \"four\"\n}\n", "line 3", "\"segments\" must be"),
        ("{\n  \"jobs\": 8,,\n  \"segments\": 2\n}\n", "line 2", "not valid JSON"),
        ("{\n  \"jobs\": 8,\n\n  \"job\": 2\n}\n", "line 4", "unknown key \"job\""),
        ("{\"cacert\": \"missing-ca.pem\"}", "line 1", "does not exist"),
        ("", "line 1", "not valid JSON"),
    ])
    func aBadFileIsOneErrorNamingFileAndLine(text: String, line: String, reason: String) async throws {
        try await withTemporaryDirectory { folder in
            let library = folder.appendingPathComponent("library")
            let configHome = folder.appendingPathComponent("xdg")
            #expect(try run(["add", "Kept", "--date", "2026-11-20"], library: library, configHome: configHome).status == 0)
            let file = library.appendingPathComponent("config.json").path
            try write(text, to: file)
            for args in [["download"], ["sync"], ["config"]] {
                let r = try run(args, library: library, configHome: configHome)
                #expect(r.status == 1, "\(args): \(r.stderr)")
                let lines = r.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(args): \(r.stderr)")
                #expect(r.stderr.hasPrefix("error: \(file), \(line): "), "\(args): \(r.stderr)")
                #expect(r.stderr.contains(reason), "\(args): \(r.stderr)")
            }
            // Nothing was lost.
            #expect(try run(["show", "Kept"], library: library, configHome: configHome).status == 0)
        }
    }

    /// Issue 46 item 9: a 64 GiB sparse `config.json` (no disk used) is one clear error, not an allocation of its
    /// size and a runtime trap; the catalog is untouched.
    @Test func aHugeSparseConfigFileIsRefusedWithoutReadingIt() async throws {
        try await withTemporaryDirectory { folder in
            let library = folder.appendingPathComponent("library")
            let configHome = folder.appendingPathComponent("xdg")
            #expect(try run(["add", "Kept", "--date", "2026-11-20"], library: library, configHome: configHome).status == 0)
            let file = library.appendingPathComponent("config.json").path
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            #expect(truncate(file, 64 << 30) == 0)
            for args in [["download"], ["sync"], ["config"]] {
                let r = try run(args, library: library, configHome: configHome)
                #expect(r.status == 1, "\(args): \(r.stderr)")
                #expect(r.stderr.hasPrefix("error: "), "\(args): \(r.stderr)")
                #expect(r.stderr.contains(file) && r.stderr.contains("64.0 GiB"), "\(args): \(r.stderr)")
            }
            try FileManager.default.removeItem(atPath: file)
            #expect(try run(["show", "Kept"], library: library, configHome: configHome).status == 0)
        }
    }

    /// The cron case: the private CA is named once, in the library's config file; then a plain `subscribe`
    /// and a plain `sync` (no --cacert) reach the TLS server. Without the file the same sync fails.
    @Test func aCACertInTheConfigFileServesThePlainCronLine() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            try await withTestServer(tls: try ca.serverTLSConfiguration()) { server in
                server.serve("/ep1.mp3", bytes: patternBytes(count: 2_000, seed: 5))
                server.serve("/ep2.mp3", bytes: patternBytes(count: 2_000, seed: 6))
                let one = SubscriptionCLITests.Episode(
                    guid: "1", title: "One", date: "Fri, 20 Nov 2026 06:00:00 GMT", url: server.url("/ep1.mp3"))
                let two = SubscriptionCLITests.Episode(
                    guid: "2", title: "Two", date: "Sat, 21 Nov 2026 06:00:00 GMT", url: server.url("/ep2.mp3"))
                server.serve("/feed.xml", bytes: SubscriptionCLITests.rss([one]), contentType: "application/rss+xml")
                let library = folder.appendingPathComponent("library")
                let configHome = folder.appendingPathComponent("xdg")
                try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
                try FileManager.default.copyItem(
                    atPath: ca.certificatePath, toPath: library.appendingPathComponent("private-ca.pem").path)
                try write(#"{"cacert": "private-ca.pem", "jobs": 2}"#, to: library.appendingPathComponent("config.json").path)

                var r = try run(["subscribe", server.url("/feed.xml"), "--name", "Secure"], library: library, configHome: configHome)
                #expect(r.status == 0, "\(r.stderr)")
                server.serve("/feed.xml", bytes: SubscriptionCLITests.rss([two, one]), contentType: "application/rss+xml")
                r = try run(["sync"], library: library, configHome: configHome)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(server.requestCount("/ep2.mp3") >= 1)

                try FileManager.default.removeItem(at: library.appendingPathComponent("config.json"))
                r = try run(["sync"], library: library, configHome: configHome)
                #expect(r.status == 1, "without the file the CA is not trusted: \(r.stderr)")
                #expect(r.stderr.contains("certificate"), "\(r.stderr)")
            }
        }
    }
}
