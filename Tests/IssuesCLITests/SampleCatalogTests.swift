import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples: the publisher's catalog matches what a server serves, `Samples/demo.sh` runs end to
/// end against the built binaries, and `sample-reader` rejects bad arguments as documented.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SampleCatalogTests {
    static let samples = CommandRunner.packageRoot.appendingPathComponent("Samples")

    /// python3 from PATH; the samples need it, so its absence is a failure, never a skip.
    func python3() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").map { "\($0)/python3" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        return try #require(
            found, "python3 is not installed (PATH=\(path)); the sample publisher needs it: run `make demo-deps`")
    }

    /// A built executable next to `issues` (`swift build --build-tests` builds every product).
    func sibling(_ name: String) throws -> String {
        let folder = URL(fileURLWithPath: CommandRunner.issuesBinary).deletingLastPathComponent()
        let path = folder.appendingPathComponent(name).path
        let built = FileManager.default.isExecutableFile(atPath: path)
        return try #require(
            built ? path : nil, "\(name) is not built at \(path); run `swift build --build-tests` first")
    }

    struct Catalog: Decodable {
        struct Publication: Decodable {
            var title: String
            var issues: [Entry]
        }
        struct Entry: Decodable {
            var name: String
            var date: String
            var assets: [Asset]
        }
        struct Asset: Decodable {
            var path: String
            var sha256: String
            var size: Int
            var unpack: Bool
        }
        var version: Int
        var publications: [Publication]
    }

    func generate(into folder: URL, bigMiB: Int) throws -> (Catalog, Data) {
        let script = Self.samples.appendingPathComponent("publisher/make_publisher.py").path
        let r = try CommandRunner.run(try python3(), [script, "--out", folder.path, "--big-mib", String(bigMiB)])
        #expect(r.status == 0, "make_publisher.py failed: \(r.stderr)")
        let data = try Data(contentsOf: folder.appendingPathComponent("catalog.json"))
        return (try JSONDecoder().decode(Catalog.self, from: data), data)
    }

    @Test func catalogMatchesTheServedBytes() async throws {
        try await withTemporaryDirectory { dir in
            let out = dir.appendingPathComponent("publisher")
            let (catalog, data) = try generate(into: out, bigMiB: 4)
            // Deterministic: a second run writes the same catalog, hashes included.
            let (_, again) = try generate(into: dir.appendingPathComponent("again"), bigMiB: 4)
            #expect(data == again, "the publisher is not deterministic")

            #expect(catalog.version == 1)
            #expect(
                catalog.publications.map(\.title) == [
                    "The Daily Loop", "Quarterly Review", "Loopback Podcast", "Field Notes",
                ])
            let entries = catalog.publications.flatMap(\.issues)
            #expect(entries.count == 7)
            #expect(Set(entries.map(\.name)).count == entries.count, "issue names must be unique")
            for entry in entries {
                #expect(IssueDate(entry.date) != nil, "\(entry.name): bad date \(entry.date)")
                #expect(!entry.assets.isEmpty)
            }

            try await withTestServer { server in
                server.serveDirectory(out.path)
                var magic: [String: [UInt8]] = [:]
                for asset in entries.flatMap(\.assets) {
                    #expect(
                        !asset.path.hasPrefix("/") && !asset.path.split(separator: "/").contains(".."), "\(asset.path)")
                    let url = try #require(URL(string: server.url("/" + asset.path)))
                    let (body, response) = try await URLSession.shared.data(from: url)
                    #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(asset.path)")
                    #expect(
                        body.count == asset.size,
                        "\(asset.path): served \(body.count) bytes, catalog says \(asset.size)")
                    #expect(
                        sha256Hex(body) == asset.sha256, "\(asset.path): served bytes do not match the catalog sha256")
                    let onDisk = try Data(contentsOf: out.appendingPathComponent(asset.path))
                    #expect(onDisk == body, "\(asset.path): served bytes differ from the file")
                    magic[asset.path] = Array(body.prefix(8))
                }
                // Archives are unpacked, plain files are not; each kind looks like what it claims to be.
                for asset in entries.flatMap(\.assets) {
                    let head = magic[asset.path] ?? []
                    switch (asset.path as NSString).pathExtension {
                    case "zip": #expect(head.starts(with: [0x50, 0x4B, 0x03, 0x04]) && asset.unpack)
                    case "gz": #expect(head.starts(with: [0x1F, 0x8B]) && asset.unpack)
                    case "pdf": #expect(head.starts(with: Array("%PDF-1.4".utf8)) && !asset.unpack)
                    case "mp3": #expect(head.starts(with: Array("ID3".utf8)) && !asset.unpack)
                    default: Testing.Issue.record("unexpected asset \(asset.path)")
                    }
                }
                let episodes = try #require(catalog.publications.first { $0.title == "Loopback Podcast" })
                #expect(episodes.issues.map { $0.assets[0].size }.max() == 4 << 20, "--big-mib sizes the large episode")
            }
        }
    }

    @Test(.slow) func demoRunsEndToEnd() async throws {
        _ = try python3()
        let server = try sibling("sample-server")
        let reader = try sibling("sample-reader")
        try await withTemporaryDirectory { tmp in
            // The demo keeps its libraries under $TMPDIR for a look afterwards; here that is our folder.
            let env = CommandRunner.environment([
                "ISSUES_BIN": CommandRunner.issuesBinary, "SAMPLE_SERVER_BIN": server, "SAMPLE_READER_BIN": reader,
                "TMPDIR": tmp.path,
            ])
            let started = ContinuousClock.now
            let demo = try CommandRunner.start(
                "/bin/bash", [Self.samples.appendingPathComponent("demo.sh").path], environment: env)
            let r = try await demo.wait(timeout: .seconds(240))
            let elapsed = ContinuousClock.now - started
            #expect(r.status == 0, "demo.sh failed:\n\(r.stdout)\n\(r.stderr)")
            #expect(r.stderr.isEmpty, "\(r.stderr)")
            #expect(elapsed < .seconds(120), "the demo took \(elapsed)")
            for line in [
                "==> generating the sample publisher", "==> adding issues to a throw-away library",
                "==> downloading 6 issues, 4 at a time", "6 done;",
                "with kill -9 after", "resuming Loopback Podcast #42: loopback-042.mp3 at",
                "resumed file verified: sha256 matches the catalog", "==> listing the library",
                "Quarterly Review 2026 Q4", "./index.html",
                "finished the-daily-loop-2026-11-18.zip: unpacked",
                "The Daily Loop 2026-11-18 is available in", "pages/04-café-crème.html", "images/日本語/写真-東京.jpg",
                "==> done in", "the library is at",
            ] {
                #expect(r.stdout.contains(line), "missing \(line.debugDescription) in:\n\(r.stdout)")
            }
            // The library it leaves behind is complete: every issue of the catalog, available.
            let library = try #require(
                r.stdout.split(separator: "\n").first { $0.hasPrefix("the library is at ") }?
                    .dropFirst("the library is at ".count).split(separator: " ").first.map(String.init))
            let list = try CommandRunner.issues(["list", "--json"], library: URL(fileURLWithPath: library))
            let issues = try #require(
                try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(issues.count == 7)
            #expect(issues.allSatisfy { $0["status"] as? String == "available" }, "\(list.stdout)")
            // Nothing of the demo is left running (its servers' command lines name a folder in `tmp`).
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/pgrep") {
                let leftovers = try CommandRunner.run("/usr/bin/pgrep", ["-f", tmp.path])
                #expect(leftovers.stdout.isEmpty, "processes left running: \(leftovers.stdout)")
            }
        }
    }

    @Test(arguments: [
        ([String](), "expected LIBRARY_DIR CATALOG_JSON BASE_URL"),
        (
            ["/tmp/lib", "/nonexistent/catalog.json", "http://127.0.0.1:9"],
            "cannot read the catalog /nonexistent/catalog.json"
        ),
    ])
    func readerRejectsBadArguments(arguments: [String], message: String) async throws {
        let r = try CommandRunner.run(try sibling("sample-reader"), arguments)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func readerRejectsABadURLAndAnUnknownIssue() async throws {
        try await withTemporaryDirectory { dir in
            let out = dir.appendingPathComponent("publisher")
            _ = try generate(into: out, bigMiB: 1)
            let catalog = out.appendingPathComponent("catalog.json").path
            let library = dir.appendingPathComponent("library").path
            var r = try CommandRunner.run(try sibling("sample-reader"), [library, catalog, "ftp://example.com"])
            #expect(r.status == 64 && r.stderr.contains("error: BASE_URL must be an http or https URL"), "\(r.stderr)")
            r = try CommandRunner.run(
                try sibling("sample-reader"), [library, catalog, "http://127.0.0.1:9", "No Such Issue"])
            #expect(r.status == 64 && r.stderr.contains("error: no issue named 'No Such Issue'"), "\(r.stderr)")
        }
    }
}
