import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where an archive's files go, through the built binary: layout templates (`subscribe`/`configure`/`add
/// --template`, the config file's `layout-template`), the extension from `Content-Type`, hostile titles,
/// `kill -9` and `resume` of a filed download, `remove` of a filed issue, and `list --subscription/--publication`.
@Suite(.timeLimit(.minutes(5))) struct LayoutCLITests {
    static let template = "{publication}/{date} {title}.{ext}"

    func run(_ args: [String], _ library: URL, environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.issues(args, library: library, environment: environment)
    }

    func showJSON(_ name: String, _ library: URL) throws -> [String: Any] {
        let r = try run(["show", name, "--json"], library)
        #expect(r.status == 0, "show \(name): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    func listNames(_ args: [String], _ library: URL) throws -> [String] {
        let r = try run(["list", "--json"] + args, library)
        #expect(r.status == 0, "list \(args): \(r.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        return list.compactMap { $0["name"] as? String }.sorted()
    }

    /// An RSS feed; titles are XML-escaped here, so a test can hand in any text.
    static func rss(title: String, items: [(title: String, date: String, url: String)]) -> [UInt8] {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(escaped(title))</title>\n"
        for (n, item) in items.enumerated() {
            xml += "<item><title>\(escaped(item.title))</title><pubDate>\(item.date)</pubDate><guid>g\(n)</guid>"
            xml += "<enclosure url=\"\(escaped(item.url))\" type=\"audio/mpeg\" length=\"100\"/></item>\n"
        }
        return Array((xml + "</channel></rss>\n").utf8)
    }

    /// Every regular file under `root`, relative, skipping the library's own files (hidden ones, the format
    /// marker, the config file).
    func files(under root: URL) -> [String] {
        let walker = FileManager.default.enumerator(atPath: root.path)
        var found: [String] = []
        while let path = walker?.nextObject() as? String {
            if path.hasPrefix(".") || path.contains("/.") || path == "library.json" || path == "config.json" {
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root.path + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                found.append(path)
            }
        }
        return found.sorted()
    }

    /// The issue's headline check: a podcast subscribed with a template files its episode at
    /// `Podcast/2026-11-20 Title.mp3`, its file served as `8f3a2c` with `audio/mpeg`.
    @Test func subscribedEpisodeIsFiledByTheTemplateWithTheExtensionFromContentType() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 5000)
            server.serve("/media/8f3a2c", bytes: body, contentType: "audio/mpeg")
            let feed = Self.rss(
                title: "Podcast", items: [("Title", "Fri, 20 Nov 2026 06:00:00 GMT", server.url("/media/8f3a2c"))])
            server.serve("/feed.xml", bytes: feed, contentType: "application/rss+xml")
            try await withTemporaryDirectory { lib in
                let r = try run(["subscribe", server.url("/feed.xml"), "--template", Self.template], lib)
                #expect(r.status == 0, "\(r.stderr)")
                let file = lib.appendingPathComponent("Podcast/2026-11-20 Title.mp3")
                #expect(sha256Hex(try Data(contentsOf: file)) == sha256Hex(body))
                #expect(files(under: lib) == ["Podcast/2026-11-20 Title.issue.json", "Podcast/2026-11-20 Title.mp3"])
                let issue = try showJSON("Title", lib)
                #expect(issue["folder"] as? String == "Podcast")
                #expect(issue["file"] as? String == "2026-11-20 Title")
                let assets = try #require(issue["assets"] as? [[String: Any]])
                #expect(assets.first?["fileName"] as? String == "2026-11-20 Title.mp3")
                let path = try run(["path", "Title"], lib)
                #expect(path.stdout.contains("Podcast"), "\(path.stdout)")
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")

                // A new template is for new issues: this one stays where it is, and the command says so.
                let changed = try run(["configure", "Podcast", "--template", "{publication}/{title}.{ext}"], lib)
                #expect(changed.status == 0, "\(changed.stderr)")
                #expect(changed.stdout.contains("applies to new issues; existing issues keep their folders"))
                #expect(FileManager.default.fileExists(atPath: file.path))
            }
        }
    }

    /// Titles as a hostile feed writes them: every file stays inside the library, every name is portable,
    /// and two items with one title get two paths.
    @Test func hostileTitlesStayInsideWithPortableNamesAndDistinctPaths() async throws {
        try await withTestServer { server in
            let titles = ["../../x", "/etc/passwd", "CON", "a:b?c*d|e\"f<g>h", "trailing dots...", "Same", "Same"]
            var items: [(String, String, String)] = []
            for (n, title) in titles.enumerated() {
                server.serve("/m/\(n)", bytes: patternBytes(count: 100 + n), contentType: "audio/mpeg")
                items.append((title, "Fri, \(10 + n) Nov 2026 06:00:00 GMT", server.url("/m/\(n)")))
            }
            server.serve("/feed.xml", bytes: Self.rss(title: "../Evil: Pub.", items: items))
            try await withTemporaryDirectory { lib in
                let r = try run(
                    ["subscribe", server.url("/feed.xml"), "--initial", "all", "--template", "{publication}/{title}.{ext}"],
                    lib)
                #expect(r.status == 0, "\(r.stderr)")
                let placed = files(under: lib).filter { $0.hasSuffix(".mp3") }
                #expect(placed.count == titles.count, "\(placed)")
                #expect(Set(placed).count == placed.count)
                let refused: Set<Character> = [":", "?", "\"", "*", "|", "<", ">", "\\"]
                let devices: Set<String> = ["CON", "PRN", "AUX", "NUL"]
                for path in placed {
                    let parts = path.split(separator: "/").map(String.init)
                    #expect(parts.count == 2, "\(path) is one folder deep")
                    for part in parts {
                        #expect(!part.contains(where: refused.contains), "\(path)")
                        #expect(!part.hasSuffix(".") && !part.hasSuffix(" "), "\(path)")
                        let stem = String(part.split(separator: ".").first ?? "").uppercased()
                        #expect(!devices.contains(stem), "\(path)")
                    }
                    let real = lib.appendingPathComponent(path).resolvingSymlinksInPath().path
                    #expect(real.hasPrefix(lib.resolvingSymlinksInPath().path + "/"), "\(real)")
                }
                // "../Evil: Pub." loses its leading dots, its colon and its trailing dot; "CON" is moved aside.
                #expect(placed.contains("_Evil_ Pub/_CON.mp3"), "\(placed)")
                #expect(placed.contains("_Evil_ Pub/Same.mp3") && placed.contains("_Evil_ Pub/Same (2).mp3"), "\(placed)")
                #expect(!FileManager.default.fileExists(atPath: lib.deletingLastPathComponent().path + "/x.mp3"))
            }
        }
    }

    /// `kill -9` once the file is placed and before the catalog hears of it, then `resume`: the same path,
    /// no second copy. And a kill mid-transfer: `resume` lands it there too.
    @Test func killNineAndResumeOfAFiledDownloadAgreeOnThePath() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 300_000, seed: 7)
            server.serve("/a/blob", bytes: body, contentType: "application/pdf")
            server.serve("/b/blob", bytes: body, contentType: "application/pdf")
            try await withTemporaryDirectory { lib in
                let add = ["--date", "2026-11-20", "--publication", "Daily", "--template", "{publication}/{date} {name}.{ext}"]
                #expect(try run(["add", "First", "--asset", server.url("/a/blob")] + add, lib).status == 0)
                let killed = try run(["download"], lib, environment: ["ISSUES_CRASH_AT": "asset-placed"])
                #expect(killed.signalled, "\(killed.stderr)")
                #expect(try showJSON("First", lib)["status"] as? String == "downloading")
                let resumed = try run(["resume"], lib)
                #expect(resumed.status == 0, "\(resumed.stderr)")
                #expect(try showJSON("First", lib)["status"] as? String == "available")
                #expect(files(under: lib).filter { $0.hasSuffix(".pdf") } == ["Daily/2026-11-20 First.pdf"])

                // Mid-transfer: the server stalls a third of the way in and the process is killed there.
                server.setFaults("/b/blob", Faults(holdAfterBytes: 100_000))
                #expect(try run(["add", "Second", "--asset", server.url("/b/blob")] + add, lib).status == 0)
                var args = ["download"]
                args.insert(contentsOf: ["--library", lib.path], at: 1)
                let child = try CommandRunner.start(CommandRunner.issuesBinary, args, environment: CommandRunner.environment())
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline, !(try partialHolds(lib, atLeast: 100_000)) { usleep(5000) }
                child.send(SIGKILL)
                _ = try await child.wait()
                server.setFaults("/b/blob", Faults())
                let again = try run(["resume"], lib)
                #expect(again.status == 0, "\(again.stderr)")
                #expect(
                    files(under: lib).filter { $0.hasSuffix(".pdf") }
                        == ["Daily/2026-11-20 First.pdf", "Daily/2026-11-20 Second.pdf"])
                let second = try Data(contentsOf: lib.appendingPathComponent("Daily/2026-11-20 Second.pdf"))
                #expect(sha256Hex(second) == sha256Hex(body))

                // Killed once placed, then removed instead of resumed: the file the catalog never heard of goes too.
                server.serve("/c/blob", bytes: body, contentType: "application/pdf")
                #expect(try run(["add", "Third", "--asset", server.url("/c/blob")] + add, lib).status == 0)
                let third = try run(["download", "Third"], lib, environment: ["ISSUES_CRASH_AT": "asset-placed"])
                #expect(third.signalled, "\(third.stderr)")
                #expect(FileManager.default.fileExists(atPath: lib.path + "/Daily/2026-11-20 Third.pdf"))
                #expect(try run(["remove", "Third"], lib).status == 0)
                #expect(
                    files(under: lib).filter { $0.hasSuffix(".pdf") }
                        == ["Daily/2026-11-20 First.pdf", "Daily/2026-11-20 Second.pdf"])
            }
        }
    }

    func partialHolds(_ lib: URL, atLeast bytes: Int) throws -> Bool {
        let downloads = lib.path + "/.downloads"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []
        return names.filter { $0.hasSuffix(".part") }.contains {
            ((try? FileManager.default.attributesOfItem(atPath: downloads + "/" + $0))?[.size] as? Int ?? 0) >= bytes
        }
    }

    /// `remove` takes a filed issue's own file and sidecar only; the shared folder goes with its last issue.
    @Test func removingAFiledIssueTakesJustItsFilesAndTheFolderWhenEmpty() async throws {
        try await withTestServer { server in
            server.serve("/one.mp3", bytes: patternBytes(count: 1000))
            server.serve("/two.mp3", bytes: patternBytes(count: 2000))
            try await withTemporaryDirectory { lib in
                for (name, path) in [("One", "/one.mp3"), ("Two", "/two.mp3")] {
                    let r = try run(
                        [
                            "add", name, "--date", "2026-11-20", "--publication", "Pod", "--asset", server.url(path),
                            "--template", "{publication}/{name}.{ext}",
                        ], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                #expect(try run(["download"], lib).status == 0)
                #expect(files(under: lib) == ["Pod/One.issue.json", "Pod/One.mp3", "Pod/Two.issue.json", "Pod/Two.mp3"])
                #expect(try run(["remove", "One"], lib).status == 0)
                #expect(files(under: lib) == ["Pod/Two.issue.json", "Pod/Two.mp3"])
                #expect(try run(["remove", "Two"], lib).status == 0)
                #expect(files(under: lib).isEmpty)
                #expect(!FileManager.default.fileExists(atPath: lib.path + "/Pod"))
            }
        }
    }

    /// The config file's `layout-template` is the default for new issues, and `issues config` says where it
    /// came from; a bad one is one error naming the file and line; a bad `--template` is a usage error.
    @Test func configFileTemplateIsTheDefaultAndBadTemplatesAreRefused() async throws {
        try await withTestServer { server in
            server.serve("/x", bytes: patternBytes(count: 100), contentType: "audio/mpeg")
            try await withTemporaryDirectory { lib in
                try FileManager.default.createDirectory(at: lib, withIntermediateDirectories: true)
                let config = lib.path + "/config.json"
                try Data("{\n  \"layout-template\": \"{publication}/{title}.{ext}\"\n}\n".utf8)
                    .write(to: URL(fileURLWithPath: config))
                let shown = try run(["config"], lib)
                #expect(shown.stdout.contains("layout-template") && shown.stdout.contains(config), "\(shown.stdout)")
                #expect(try run(["add", "Talk", "--date", "2026-11-20", "--publication", "Show", "--asset", server.url("/x")], lib).status == 0)
                #expect(try run(["download"], lib).status == 0)
                #expect(files(under: lib) == ["Show/Talk.issue.json", "Show/Talk.mp3"], "\(files(under: lib))")

                for bad in ["{title}", "../{title}/x", "{publication}/{nope}"] {
                    let r = try run(["add", "Bad", "--date", "2026-11-20", "--template", bad], lib)
                    #expect(r.status == 64, "\(bad): \(r.stderr)")
                    #expect(r.stderr.contains("--template"), "\(r.stderr)")
                }
                try Data("{\n  \"jobs\": 2,\n  \"layout-template\": \"/abs/{title}\"\n}\n".utf8)
                    .write(to: URL(fileURLWithPath: config))
                let broken = try run(["config"], lib)
                #expect(broken.status != 0)
                #expect(broken.stderr.contains("\(config), line 3"), "\(broken.stderr)")
            }
        }
    }

    /// `list --subscription` and `--publication`: the issues of one, in the table and in JSON.
    @Test func listFiltersBySubscriptionAndPublication() async throws {
        try await withTestServer { server in
            server.serve("/e.mp3", bytes: patternBytes(count: 100))
            let feed = Self.rss(title: "Loop Cast", items: [("Episode 1", "Fri, 20 Nov 2026 06:00:00 GMT", server.url("/e.mp3"))])
            server.serve("/feed.xml", bytes: feed)
            try await withTemporaryDirectory { lib in
                #expect(try run(["subscribe", server.url("/feed.xml"), "--no-download"], lib).status == 0)
                #expect(try run(["add", "Gazette 12", "--date", "2026-11-19", "--publication", "Gazette"], lib).status == 0)
                #expect(try run(["add", "Other 1", "--date", "2026-11-18"], lib).status == 0)
                #expect(try listNames(["--subscription", "loop cast"], lib) == ["Episode 1"])
                #expect(try listNames(["--publication", "gazette"], lib) == ["Gazette 12"])
                #expect(try listNames(["--publication", "Gazette", "--status", "available"], lib) == [])
                #expect(try listNames([], lib).count == 3)
                let table = try run(["list", "--subscription", "Loop Cast"], lib)
                #expect(table.stdout.contains("Episode 1") && !table.stdout.contains("Gazette"), "\(table.stdout)")
                let empty = try run(["list", "--publication", "Nobody"], lib)
                #expect(empty.status == 0 && empty.stderr.contains("no issues of publication \"Nobody\""), "\(empty.stderr)")
                let unknown = try run(["list", "--subscription", "Nope"], lib)
                #expect(unknown.status != 0 && unknown.stderr.contains("no subscription named \"Nope\""), "\(unknown.stderr)")
            }
        }
    }
}
