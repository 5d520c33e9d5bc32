import Foundation
import NewsstandTestSupport
import Testing

/// Every catalog command through the built `issues` binary: streams, exit codes, JSON keys, errors.
@Suite(.timeLimit(.minutes(5))) struct CLICatalogTests {
    func run(_ args: [String], _ library: URL, env: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.issues(args, library: library, environment: env)
    }

    func manifestBytes(_ library: URL) -> Data? {
        try? Data(contentsOf: library.appendingPathComponent("library.json"))
    }

    @Test func addListShowPathRemove() async throws {
        try await withTemporaryDirectory { lib in
            var r = try run(
                ["add", "The Daily 2026-11-20", "--date", "2026-11-20", "--asset", "http://127.0.0.1:9/a.pdf"], lib)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("The Daily 2026-11-20"))
            r = try run(["add", "Weekly 47", "--date", "2026-11-22"], lib)
            #expect(r.status == 0)
            r = try run(["add", "Archive 1999", "--date", "1999-01-01"], lib)
            #expect(r.status == 0)
            r = try run(
                [
                    "add-asset", "Weekly 47", "https://127.0.0.1:9/w.zip", "--sha256",
                    String(repeating: "ab", count: 32), "--no-unpack",
                ], lib)
            #expect(r.status == 0)
            let id = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(id.count == 16 && id.allSatisfy(\.isHexDigit))

            r = try run(["list"], lib)
            #expect(r.status == 0)
            let lines = r.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("NAME") == true)
            #expect(
                lines.dropFirst().map { $0.split(separator: " ").first.map(String.init) ?? "" } == [
                    "Weekly", "The", "Archive",
                ])

            r = try run(["list", "--json"], lib)
            let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
            #expect(list.map { $0["name"] as? String } == ["Weekly 47", "The Daily 2026-11-20", "Archive 1999"])
            for issue in list {
                for key in ["name", "date", "status", "directory", "assets"] {
                    #expect(issue[key] != nil, "missing \(key)")
                }
                #expect((issue["directory"] as? String)?.hasPrefix(lib.path + "/") == true)
            }
            let weekly = try #require(list.first?["assets"] as? [[String: Any]])
            let asset = try #require(weekly.first)
            for key in ["id", "url", "state", "receivedBytes", "expectedBytes", "error"] {
                #expect(asset.keys.contains(key), "missing \(key)")
            }
            #expect(asset["id"] as? String == id)
            #expect(asset["state"] as? String == "pending")
            #expect(asset["expectedBytes"] is NSNull)
            #expect(asset["error"] is NSNull)

            r = try run(["show", "Weekly 47", "--json"], lib)
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            #expect(shown["name"] as? String == "Weekly 47")
            #expect(shown["date"] as? String == "2026-11-22")
            #expect(shown["status"] as? String == "none")

            r = try run(["show", "Weekly 47"], lib)
            #expect(r.stdout.contains(id) && r.stdout.contains("https://127.0.0.1:9/w.zip"))

            r = try run(["list", "--status", "available"], lib)
            #expect(r.status == 0 && r.stdout.isEmpty)

            r = try run(["path", "Weekly 47"], lib)
            #expect(r.stdout == lib.path + "/Weekly 47\n")
            #expect(r.stderr.isEmpty)

            // No desktop opener on PATH: `open` prints the path.
            r = try run(["open", "Weekly 47"], lib, env: ["PATH": "/nonexistent"])
            #expect(r.status == 0)
            #expect(r.stdout == lib.path + "/Weekly 47\n")

            r = try run(["remove", "Weekly 47"], lib)
            #expect(r.status == 0)
            #expect(!FileManager.default.fileExists(atPath: lib.path + "/Weekly 47"))
            r = try run(["list", "--json"], lib)
            let after = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
            #expect(after.count == 2)
        }
    }

    static let hostileNames = [
        "../../x", "/", ".", "..", String(repeating: "n", count: 300), "a/../../b", "/etc/passwd", "-", "~", "$HOME",
        "*", "Ünïcødé 東京", ".hidden",
    ]

    @Test(arguments: hostileNames)
    func hostileNamesStayInside(_ name: String) async throws {
        try await withTemporaryDirectory { parent in
            let lib = parent.appendingPathComponent("lib")
            let add = try run(["add", "--date", "2026-11-20", "--", name], lib)
            #expect(add.status == 0, "\(add.stderr)")
            let path = try run(["path", "--", name], lib)
            #expect(path.status == 0)
            let folder = URL(fileURLWithPath: path.stdout.trimmingCharacters(in: .newlines))
            #expect(folder.deletingLastPathComponent().path == lib.path)
            #expect(!folder.lastPathComponent.hasPrefix("."))
            // Nothing was created beside the library.
            #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["lib"])
            let show = try run(["show", "--json", "--", name], lib)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
            #expect(object["name"] as? String == name)
        }
    }

    // (A NUL cannot travel through argv; the library-level tests cover it.)
    static let refusedNames = ["", "   ", "a\nb", "tab\there", "bell\u{7}", "esc\u{1B}[2J", "del\u{7F}"]

    @Test(arguments: refusedNames)
    func refusedNamesChangeNothing(_ name: String) async throws {
        try await withTemporaryDirectory { lib in
            _ = try run(["add", "Existing", "--date", "2026-11-20"], lib)
            let before = manifestBytes(lib)
            let r = try run(["add", "--", name], lib)
            #expect(r.status != 0)
            #expect(r.stderr.hasPrefix("error: ") || r.stderr.hasPrefix("Error: "), "\(r.stderr)")
            #expect(!r.stderr.contains("Fatal error"))
            #expect(manifestBytes(lib) == before)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: lib.path).sorted() == [
                    ".catalog", ".lock", "library.json",
                ])
        }
    }

    @Test func errorsAreOneLineAndChangeNothing() async throws {
        try await withTemporaryDirectory { lib in
            _ = try run(["add", "A", "--date", "2026-11-20"], lib)
            let before = manifestBytes(lib)
            let cases: [([String], Int32, String)] = [
                (["add", "A"], 1, "already exists"),
                (["add", "B", "--date", "2026-02-30"], 64, "2026-02-30"),
                (["add", "B", "--date", "yesterday"], 64, "yesterday"),
                (["add", "B", "--asset", "ftp://example.com/x"], 64, "ftp://example.com/x"),
                (["add", "B", "--asset", "not a url"], 64, "not a url"),
                (["add-asset", "missing", "http://127.0.0.1:9/x"], 1, "missing"),
                (["add-asset", "A", "http://127.0.0.1:9/x", "--sha256", "xyz"], 64, "sha256"),
                (["show", "missing"], 1, "missing"),
                (["path", "missing"], 1, "missing"),
                (["open", "missing"], 1, "missing"),
                (["remove", "missing"], 1, "missing"),
                (["download", "missing"], 1, "missing"),
                (["download", "--jobs", "0"], 64, "jobs"),
                (["list", "--status", "bogus"], 64, "bogus"),
            ]
            for (args, status, mention) in cases {
                let r = try run(args, lib)
                #expect(r.status == status, "\(args): \(r.status) \(r.stderr)")
                #expect(r.stderr.lowercased().hasPrefix("error: "), "\(args): \(r.stderr)")
                #expect(r.stderr.contains(mention), "\(args): \(r.stderr)")
                #expect(r.stdout.isEmpty, "\(args): \(r.stdout)")
                if status == 1 { #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)") }
                #expect(manifestBytes(lib) == before, "\(args) changed the manifest")
            }
            let unknown = try CommandRunner.issues(["frobnicate"], library: nil)
            #expect(unknown.status == 64)
            #expect(unknown.stderr.contains("frobnicate"))
        }
    }

    @Test(arguments: [
        ("{\"version\": 1, \"issues\": [", "not a valid library manifest"),
        ("{\"version\": 99, \"issues\": [], \"pendingDownloads\": []}", "version 99"),
        ("\u{0}\u{1}garbage", "not a valid library manifest"),
    ])
    func badManifestsAreRefusedAndKept(_ content: String, _ mention: String) async throws {
        try await withTemporaryDirectory { lib in
            let path = lib.appendingPathComponent("library.json")
            try Data(content.utf8).write(to: path)
            for args in [["list"], ["add", "X", "--date", "2026-11-20"], ["show", "X"], ["download"]] {
                let r = try run(args, lib)
                #expect(r.status == 1, "\(args)")
                #expect(r.stderr.hasPrefix("error: "), "\(r.stderr)")
                #expect(r.stderr.contains(path.path), "\(r.stderr)")
                #expect(r.stderr.contains(mention), "\(r.stderr)")
                #expect(try Data(contentsOf: path) == Data(content.utf8))
            }
        }
    }

    @Test func libraryLocationResolution() async throws {
        try await withTemporaryDirectory { root in
            let env = root.appendingPathComponent("from-env")
            var r = try CommandRunner.issues(
                ["add", "E", "--date", "2026-11-20"], library: nil, environment: ["ISSUES_LIBRARY": env.path])
            #expect(r.status == 0)
            #expect(FileManager.default.fileExists(atPath: env.appendingPathComponent("library.json").path))
            let xdg = root.appendingPathComponent("xdg")
            var extra = ["XDG_DATA_HOME": xdg.path]
            r = try CommandRunner.issues(["add", "X", "--date", "2026-11-20"], library: nil, environment: extra)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(FileManager.default.fileExists(atPath: xdg.appendingPathComponent("issues/library.json").path))
            extra = ["XDG_DATA_HOME": "", "HOME": root.appendingPathComponent("home").path]
            r = try CommandRunner.issues(["path", "X"], library: nil, environment: extra)
            #expect(r.status == 1)  // a different, empty library
            r = try CommandRunner.issues(["add", "H", "--date", "2026-11-20"], library: nil, environment: extra)
            #expect(
                FileManager.default.fileExists(
                    atPath: root.appendingPathComponent("home/.local/share/issues/library.json").path))
        }
    }

    @Test func twentyConcurrentAddsAllLand() async throws {
        try await withTemporaryDirectory { lib in
            let processes = try (0..<20).map { i in
                try CommandRunner.start(
                    CommandRunner.issuesBinary, ["add", "Issue \(i)", "--date", "2026-11-20", "--library", lib.path],
                    environment: CommandRunner.environment())
            }
            for process in processes {
                let r = try await process.wait()
                #expect(r.status == 0, "\(r.stderr)")
            }
            let r = try run(["list", "--json"], lib)
            let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
            #expect(Set(list.compactMap { $0["name"] as? String }) == Set((0..<20).map { "Issue \($0)" }))
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
