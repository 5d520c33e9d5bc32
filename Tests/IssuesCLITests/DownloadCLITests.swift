import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `issues download` / `resume` as real processes against the NIO test server: kill -9, Ctrl-C,
/// a full disk, archives good and hostile.
@Suite(.timeLimit(.minutes(5))) struct DownloadCLITests {
    /// What the library writes into an issue's folder besides the content: the sidecar and the cover files.
    static let libraryFiles: Set<String> = ["issue.json", "cover.jpg", "cover-256.jpg", "cover-1024.jpg"]

    func run(_ args: [String], _ library: URL) throws -> CommandResult {
        try CommandRunner.issues(args, library: library)
    }

    func start(_ args: [String], _ library: URL) throws -> RunningCommand {
        var args = args
        args.insert(contentsOf: ["--library", library.path], at: 1)
        return try CommandRunner.start(CommandRunner.issuesBinary, args, environment: CommandRunner.environment())
    }

    func showJSON(_ name: String, _ library: URL) throws -> [String: Any] {
        let r = try run(["show", name, "--json"], library)
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    func assetID(_ name: String, _ library: URL) throws -> String {
        let assets = try #require(try showJSON(name, library)["assets"] as? [[String: Any]])
        return try #require(assets.first?["id"] as? String)
    }

    /// Waits until `condition` holds, polling every 5 ms on this thread. It blocks on purpose: other
    /// tests block the two threads of the cooperative pool while their commands run, and a `Task.sleep`
    /// here could then wake seconds late, after the moment the test means to catch.
    func waitFor(
        _ what: String, timeout: Duration = .seconds(30), while child: RunningCommand? = nil, _ condition: () -> Bool
    ) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if let child, !child.process.isRunning {
                throw TimeoutError(description: "the child ended before \(what): \(child.stderrSoFar)")
            }
            if ContinuousClock.now > deadline { throw TimeoutError(description: "timed out waiting for \(what)") }
            usleep(5000)
        }
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test func downloadPrintsEventsOnStderrAndASummaryOnStdout() async throws {
        try await withTestServer { server in
            server.serve("/a.pdf", bytes: patternBytes(count: 10_000))
            server.serve("/missing.pdf", bytes: [])
            server.setFaults("/missing.pdf", Faults(status: 404))
            try await withTemporaryDirectory { lib in
                _ = try run(
                    [
                        "add", "Mixed", "--date", "2026-11-20", "--asset", server.url("/a.pdf"), "--asset",
                        server.url("/missing.pdf"),
                    ], lib)
                let r = try run(["download", "--jobs", "2"], lib)
                #expect(r.status == 1)
                #expect(r.stdout.contains("1 done, 1 failed"), "\(r.stdout)")
                #expect(r.stderr.contains("done Mixed: a.pdf"), "\(r.stderr)")
                // One line per failure: the event's, not repeated after the summary.
                let errors = r.stderr.split(separator: "\n").filter { $0.contains("error") }
                #expect(errors.count == 1 && errors[0].hasPrefix("error: Mixed: missing.pdf"), "\(r.stderr)")
                #expect(errors.first?.contains("404") == true, "\(r.stderr)")
                #expect(!r.stderr.contains("\u{1B}["), "no terminal escapes when stderr is not a terminal")
                let issue = try showJSON("Mixed", lib)
                #expect(issue["status"] as? String == "failed")
                // A retry after the publisher fixes the file.
                server.setFaults("/missing.pdf", Faults())
                server.serve("/missing.pdf", bytes: [1, 2, 3])
                let again = try run(["resume"], lib)
                #expect(again.status == 0, "\(again.stderr)")
                #expect(try showJSON("Mixed", lib)["status"] as? String == "available")
            }
        }
    }

    /// The issue's headline test: kill -9 in the middle of a large, slow download, then `resume`.
    @Test func killNineThenResumeFetchesOnlyTheRest() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 8 << 20, seed: 42)
            server.serve("/episode.mp3", bytes: body)
            // Slow enough that the kill lands mid-transfer even when other tests' blocking waits starve
            // this test's polling for seconds (two cores, a two-thread cooperative pool).
            server.setFaults("/episode.mp3", Faults(bytesPerSecond: 512 << 10))
            try await withTemporaryDirectory { lib in
                _ = try run(["add", "Podcast 12", "--date", "2026-11-20", "--asset", server.url("/episode.mp3")], lib)
                let id = try assetID("Podcast 12", lib)
                let partial = lib.path + "/.downloads/\(id).part"
                let child = try start(["download"], lib)
                try waitFor("1.5 MiB on disk", while: child) { size(partial) >= 3 << 19 }
                child.send(SIGKILL)
                let killed = try await child.wait()
                #expect(killed.signalled)
                let onDisk = size(partial)
                #expect(onDisk > 0 && onDisk < body.count)
                let mid = try showJSON("Podcast 12", lib)
                #expect(mid["status"] as? String == "downloading")

                server.setFaults("/episode.mp3", Faults())
                let resumed = try run(["resume"], lib)
                #expect(resumed.status == 0, "\(resumed.stderr)")
                #expect(resumed.stderr.contains("resuming Podcast 12: episode.mp3 at"), "\(resumed.stderr)")
                let file = try Data(contentsOf: lib.appendingPathComponent("Podcast 12/episode.mp3"))
                #expect(sha256Hex(file) == sha256Hex(body))
                let sent = server.bodyBytesSent("/episode.mp3")
                // Bytes the server handed to the kernel that the killed process never wrote are the only
                // ones fetched twice: at most a socket buffer's worth.
                #expect(sent <= body.count + (512 << 10), "server sent \(sent) for \(body.count) bytes")
                #expect(
                    server.requests("/episode.mp3").last?.header("range") == "bytes=\(onDisk)-"
                        || sent <= body.count + (512 << 10))
                #expect(try showJSON("Podcast 12", lib)["status"] as? String == "available")
            }
        }
    }

    /// Two `issues download` processes on one library: the second leaves the asset the first is fetching
    /// alone (it neither fetches it nor touches its partial file) and fetches the rest.
    @Test func aSecondProcessLeavesTheFirstProcesssAssetAlone() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 8 << 20, seed: 7)
            server.serve("/slow.mp3", bytes: body)
            server.setFaults("/slow.mp3", Faults(bytesPerSecond: 256 << 10))
            server.serve("/quick.pdf", bytes: patternBytes(count: 1000))
            try await withTemporaryDirectory { lib in
                _ = try run(["add", "Slow", "--date", "2026-11-20", "--asset", server.url("/slow.mp3")], lib)
                let id = try assetID("Slow", lib)
                let partial = lib.path + "/.downloads/\(id).part"
                let first = try start(["download"], lib)
                defer { first.send(SIGKILL) }
                try waitFor("the first process to write", while: first) { size(partial) > 0 }
                _ = try run(["add", "Quick", "--date", "2026-11-21", "--asset", server.url("/quick.pdf")], lib)
                let second = try run(["download"], lib)
                #expect(second.status == 0, "\(second.stderr)")
                #expect(second.stderr.contains("another issues process is downloading it"), "\(second.stderr)")
                #expect(second.stdout.contains("1 done, 1 skipped"), "\(second.stdout)")
                #expect(server.requests("/slow.mp3").count == 1)
                #expect(size(partial) > 0)
                #expect(FileManager.default.fileExists(atPath: lib.path + "/Quick/quick.pdf"))
                first.send(SIGKILL)
                _ = try await first.wait()
            }
        }
    }

    /// kill -9 with four ranges in flight: `resume` (without `--segments`) continues each range where its
    /// bytes on disk end (not where the record last saved them), and fetches again at most a MiB in all:
    /// the bytes that were on their way (a tenth of a second per connection at this rate) and the probes.
    @Test func killNineWithSegmentsInFlightThenResumeContinuesEveryRange() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 16 << 20, seed: 43)
            server.serve("/film.mkv", bytes: body)
            server.setFaults("/film.mkv", Faults(bytesPerSecond: 1 << 20))
            try await withTemporaryDirectory { lib in
                _ = try run(["add", "Film", "--date", "2026-11-20", "--asset", server.url("/film.mkv")], lib)
                let id = try assetID("Film", lib)
                let record = lib.path + "/.downloads/\(id).resume.json"
                /// The saved ranges' landed bytes, per range.
                func landed() -> [Int] {
                    guard let data = FileManager.default.contents(atPath: record),
                        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                        let plan = json["segments"] as? [String: Any],
                        let ranges = plan["segments"] as? [[String: Any]]
                    else { return [] }
                    return ranges.map { (($0["next"] as? Int) ?? 0) - (($0["start"] as? Int) ?? 0) }
                }
                let child = try start(["download", "--segments", "4"], lib)
                try waitFor("every range saved past 1 MiB", while: child) {
                    let ranges = landed()
                    return ranges.count == 4 && ranges.allSatisfy { $0 >= 1 << 20 }
                }
                // Every range was saved just now, and the next save is a MiB of a range away (a second at
                // this rate): killed 0.7 s on, the record lags the file by about 2.8 MiB in all.
                usleep(700_000)
                child.send(SIGKILL)
                let killed = try await child.wait()
                #expect(killed.signalled)
                let saved = landed()
                #expect(saved.count == 4 && saved.reduce(0, +) < body.count, "\(saved)")

                server.setFaults("/film.mkv", Faults())
                let resumed = try run(["resume"], lib)
                #expect(resumed.status == 0, "\(resumed.stderr)")
                let file = try Data(contentsOf: lib.appendingPathComponent("Film/film.mkv"))
                #expect(sha256Hex(file) == sha256Hex(body))
                // Each range resumed from its saved bytes: the four ranges of the resume start past their
                // ranges' starts.
                let resumedRanges = server.requests("/film.mkv").suffix(4).compactMap { $0.header("range") }
                #expect(resumedRanges.count == 4 && !resumedRanges.contains("bytes=0-0"), "\(resumedRanges)")
                let sent = server.bodyBytesSent("/film.mkv")
                #expect(sent <= body.count + (1 << 20) + 2, "server sent \(sent) for \(body.count) bytes")
                #expect(try showJSON("Film", lib)["status"] as? String == "available")
            }
        }
    }

    @Test func controlCStopsCleanlyAndResumeContinues() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 8 << 20, seed: 43)
            server.serve("/big.bin", bytes: body)
            server.setFaults("/big.bin", Faults(bytesPerSecond: 1 << 20))
            try await withTemporaryDirectory { lib in
                _ = try run(["add", "Big", "--date", "2026-11-20", "--asset", server.url("/big.bin")], lib)
                let id = try assetID("Big", lib)
                let child = try start(["download"], lib)
                try waitFor("some bytes", while: child) { size(lib.path + "/.downloads/\(id).part") >= 256 << 10 }
                child.send(SIGINT)
                let r = try await child.wait(timeout: .seconds(20))
                #expect(r.status == 130, "\(r.stderr)")
                #expect(r.stderr.contains("issues resume"), "\(r.stderr)")
                #expect(size(lib.path + "/.downloads/\(id).part") > 0)
                server.setFaults("/big.bin", Faults())
                let resumed = try run(["resume"], lib)
                #expect(resumed.status == 0, "\(resumed.stderr)")
                #expect(sha256Hex(try Data(contentsOf: lib.appendingPathComponent("Big/big.bin"))) == sha256Hex(body))
                #expect(server.bodyBytesSent("/big.bin") <= body.count + (512 << 10))
            }
        }
    }

    /// `http_proxy` is honoured (through a real forward proxy that sends every request to the test server,
    /// so an unresolvable host can only be reached through it) and `no_proxy` bypasses it.
    @Test func proxiesFromTheEnvironmentAreUsedAndNoProxyIsHonoured() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 30_000, seed: 77)
            server.serve("/via-proxy.bin", bytes: body)
            try await withTestProxy(.init(upstream: ("127.0.0.1", server.port))) { proxy in
                try await withTemporaryDirectory { lib in
                    _ = try run(
                        [
                            "add", "Proxied", "--date", "2026-11-20", "--asset",
                            "http://issues-proxy-test.invalid/via-proxy.bin",
                        ], lib)
                    let r = try CommandRunner.issues(
                        ["download", "--retries", "1"], library: lib, environment: ["http_proxy": proxy.url()])
                    #expect(r.status == 0, "\(r.stderr)")
                    #expect(try Data(contentsOf: lib.appendingPathComponent("Proxied/via-proxy.bin")) == Data(body))
                    #expect(proxy.requests.map(\.target) == ["http://issues-proxy-test.invalid/via-proxy.bin"])
                }
            }
            try await withTemporaryDirectory { lib in
                // no_proxy sends 127.0.0.1 direct, past a proxy that does not exist.
                _ = try run(["add", "Direct", "--date", "2026-11-20", "--asset", server.url("/via-proxy.bin")], lib)
                let r = try CommandRunner.issues(
                    ["download", "--retries", "1"], library: lib,
                    environment: ["http_proxy": "http://127.0.0.1:1", "no_proxy": "localhost,127.0.0.1"])
                #expect(r.status == 0, "\(r.stderr)")
            }
        }
    }

    /// `no_proxy=127.0.0.0/8`, as curl reads it: an address inside the range goes direct, past a real proxy
    /// that would otherwise carry it (and records every request it sees); a range that does not hold the
    /// address leaves the download to the proxy.
    @Test func noProxyCIDRSendsAddressesInTheRangeDirect() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 30_000, seed: 78)
            server.serve("/cidr.bin", bytes: body)
            try await withTestProxy(.init(upstream: ("127.0.0.1", server.port))) { proxy in
                for (noProxy, proxied) in [("10.0.0.0/8,127.0.0.0/8", false), ("::1/128,10.0.0.0/8", true)] {
                    try await withTemporaryDirectory { lib in
                        _ = try run(["add", "CIDR", "--date", "2026-11-20", "--asset", server.url("/cidr.bin")], lib)
                        let before = proxy.requests.count
                        let r = try CommandRunner.issues(
                            ["download", "--retries", "1"], library: lib,
                            environment: ["http_proxy": proxy.url(), "no_proxy": noProxy])
                        #expect(r.status == 0, "\(noProxy): \(r.stderr)")
                        #expect(try Data(contentsOf: lib.appendingPathComponent("CIDR/cidr.bin")) == Data(body))
                        #expect((proxy.requests.count > before) == proxied, "\(noProxy): \(proxy.requests)")
                    }
                }
            }
        }
    }

    @Test func fullDiskFailsTheAssetClearlyAndKeepsTheManifest() async throws {
        try await withTestServer { server in
            server.serve("/huge.bin", bytes: patternBytes(count: 2 << 20))
            try await withTemporaryDirectory { lib in
                _ = try run(["add", "Huge", "--date", "2026-11-20", "--asset", server.url("/huge.bin")], lib)
                let before = try Data(contentsOf: lib.appendingPathComponent("library.json"))
                // A file-size limit of 1,024 blocks (512 KiB): the 2 MiB download's writes past it fail with EFBIG, as
                // on a full disk, while the catalog's database and its WAL stay under it.
                let script = "ulimit -f 1024; exec \"$0\" download --library \"$1\""
                let r = try CommandRunner.run(
                    "/bin/sh", ["-c", script, CommandRunner.issuesBinary, lib.path],
                    environment: CommandRunner.environment())
                #expect(r.status == 1, "\(r.stderr)")
                #expect(r.stderr.contains("error: Huge: huge.bin"), "\(r.stderr)")
                #expect(r.stderr.contains("File too large") || r.stderr.contains("No space"), "\(r.stderr)")
                #expect(!r.signalled)
                let issue = try showJSON("Huge", lib)
                #expect(issue["status"] as? String == "failed")
                let assets = try #require(issue["assets"] as? [[String: Any]])
                #expect(
                    (assets.first?["error"] as? String)?.contains("huge.bin") == true
                        || (assets.first?["error"] as? String)?.contains(".part") == true)
                #expect(before.count > 0)
            }
        }
    }

    @Test func zipServedUnderAnyNameIsUnpackedIntoTheIssueFolder() async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("issue.zip").path
            try ArchiveFixtures.write(
                [
                    .directory("pages/"), .file("pages/01 Cover.html", Array("<h1>Cover</h1>".utf8)),
                    .file("images/東京.jpg", patternBytes(count: 5000)), .file("index.html", Array("<a>".utf8)),
                ],
                format: .zip, to: zip)
            let tarball = fixtures.appendingPathComponent("extra.tgz").path
            try ArchiveFixtures.write([.file("extra/notes.txt", Array("notes".utf8))], format: .tarGzip, to: tarball)
            try await withTestServer { server in
                server.serve("/download/7F3A.bin", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                server.serve("/extra", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: tarball))))
                server.serve("/kept.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                try await withTemporaryDirectory { lib in
                    _ = try run(
                        [
                            "add", "Daily 1", "--date", "2026-11-20", "--asset", server.url("/download/7F3A.bin"),
                            "--asset", server.url("/extra"),
                        ], lib)
                    _ = try run(["add-asset", "Daily 1", server.url("/kept.zip"), "--no-unpack"], lib)
                    let r = try run(["download"], lib)
                    #expect(r.status == 0, "\(r.stderr)")
                    let folder = lib.appendingPathComponent("Daily 1")
                    // The cover files and the sidecar are the library's own, beside the content.
                    let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
                        .filter { !Self.libraryFiles.contains($0) }.sorted()
                    #expect(
                        files == [
                            "extra", "extra/notes.txt", "images", "images/東京.jpg", "index.html", "kept.zip", "pages",
                            "pages/01 Cover.html",
                        ])
                    let issue = try showJSON("Daily 1", lib)
                    #expect(issue["status"] as? String == "available")
                    let states = (issue["assets"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
                    #expect(states == ["unpacked", "unpacked", "downloaded"])
                    // The unpacked archives are gone from the download area.
                    let leftovers = try FileManager.default.contentsOfDirectory(atPath: lib.path + "/.downloads").filter
                    { $0 != "asset-locks" && !$0.hasPrefix(".spare-record-") }
                    #expect(leftovers.isEmpty, "\(leftovers)")
                }
            }
        }
    }

    /// Text whose lines look like paths is what libarchive's magic-less `mtree` reader takes for a file list:
    /// every one of these used to be "unpacked" into empty files named after its lines, the download deleted.
    static let textAssets: [(name: String, bytes: [UInt8])] = [
        ("issues.csv", Array("id,date,pages,url\n1,2026-11-20,32,https://example.com/a.pdf\n2,2026-11-21,64,https://example.com/b.pdf\n".utf8)),
        ("playlist.m3u", Array("#EXTM3U\n#EXTINF:1832,Episode 1\nhttps://cdn.example.com/ep1.mp3\n#EXTINF:1710,Episode 2\nhttps://cdn.example.com/ep2.mp3\n".utf8)),
        ("urls.txt", Array("https://example.com/issues/2026-11-20.pdf\nhttps://example.com/issues/2026-11-21.pdf\n".utf8)),
        ("meta.json", Array("{\"name\":\"TheDaily\",\"date\":\"2026-11-20\",\"pages\":32}\n".utf8)),
        ("keys.b64", Array("a9f6B234F9vvhUMMbeQeIhHy88oAjmJ1H3zJ9J2ptrFgDqR/Y8pzZwC0YWV/\nQm9keSBvZiB0aGUgc2Vjb25kIGxpbmUgb2YgYmFzZTY0IHRleHQgaGVyZQ==\n".utf8)),
    ]

    @Test func textAssetsArePlacedByteIdenticalNeverUnpacked() async throws {
        try await withTestServer { server in
            var args = ["add", "Text", "--date", "2026-01-01"]
            for asset in Self.textAssets {
                server.serve("/\(asset.name)", bytes: asset.bytes)
                args += ["--asset", server.url("/\(asset.name)")]
            }
            try await withTemporaryDirectory { lib in
                #expect(try run(args, lib).status == 0)
                let r = try run(["download"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(!r.stderr.contains("unpacked"), "\(r.stderr)")
                let folder = lib.appendingPathComponent("Text").path
                let files = try FileManager.default.subpathsOfDirectory(atPath: folder)
                    .filter { !Self.libraryFiles.contains($0) }.sorted()
                #expect(files == Self.textAssets.map(\.name).sorted())
                for asset in Self.textAssets {
                    let placed = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + asset.name))
                    #expect(Array(placed) == asset.bytes, "\(asset.name)")
                }
                let issue = try showJSON("Text", lib)
                #expect(issue["status"] as? String == "available")
                let states = (issue["assets"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
                #expect(states == Array(repeating: "downloaded", count: Self.textAssets.count))
            }
        }
    }

    @Test func hostileArchiveFailsTheAssetAndWritesNothingOutside() async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("slip.zip").path
            try ArchiveFixtures.write(
                [.file("ok.txt", Array("fine".utf8)), .file("../../../sentinel-escape.txt", Array("pwned".utf8))],
                format: .zip, to: zip)
            try await withTestServer { server in
                server.serve("/slip.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                try await withTemporaryDirectory { parent in
                    let lib = parent.appendingPathComponent("lib")
                    _ = try run(["add", "Evil", "--date", "2026-11-20", "--asset", server.url("/slip.zip")], lib)
                    let r = try run(["download"], lib)
                    #expect(r.status == 1)
                    #expect(r.stderr.contains("cannot unpack"), "\(r.stderr)")
                    // The content folder is made with the first file placed in it: none here.
                    let content = try? FileManager.default.contentsOfDirectory(
                        atPath: lib.appendingPathComponent("Evil").path)
                    #expect(content?.isEmpty ?? true, "\(content ?? [])")
                    #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["lib"])
                    #expect(!FileManager.default.fileExists(atPath: "/sentinel-escape.txt"))
                    let issue = try showJSON("Evil", lib)
                    #expect(issue["status"] as? String == "failed")
                    let staging = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/.staging")) ?? []
                    #expect(staging.isEmpty)
                }
            }
        }
    }

    @Test func bombStopsAtTheConfiguredLimit() async throws {
        try await withTemporaryDirectory { fixtures in
            let bomb = fixtures.appendingPathComponent("bomb.zip").path
            try ArchiveFixtures.writeBomb(entryName: "zeros.bin", zeroBytes: 64 << 20, format: .zip, to: bomb)
            #expect(size(bomb) < 1 << 20)
            try await withTestServer { server in
                server.serve("/bomb.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: bomb))))
                try await withTemporaryDirectory { lib in
                    _ = try run(["add", "Bomb", "--date", "2026-11-20", "--asset", server.url("/bomb.zip")], lib)
                    let r = try run(["download", "--max-unpacked-bytes", "\(8 << 20)"], lib)
                    #expect(r.status == 1)
                    #expect(r.stderr.contains("cannot unpack"), "\(r.stderr)")
                    // The content folder is made with the first file placed in it: none here.
                    let content = try? FileManager.default.contentsOfDirectory(
                        atPath: lib.appendingPathComponent("Bomb").path)
                    #expect(content?.isEmpty ?? true, "\(content ?? [])")
                }
            }
        }
    }

    /// The library's files of one asset, wherever they are kept (what a removal must leave none of).
    func leftovers(of id: String, _ lib: URL) -> [String] {
        var found: [String] = []
        for folder in [".downloads", ".staging", ".catalog/content"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: lib.path + "/" + folder)) ?? []
            found += names.filter { $0.hasPrefix(id) }.map { folder + "/" + $0 }
        }
        return found
    }

    /// `remove` in another process while the asset downloads, or while its archive unpacks: that process holds
    /// the asset's lock, so the removal leaves the asset's files to it. It used to leave the resume record for
    /// good (and the removal sometimes failed deleting the staging folder under the extraction); now the
    /// downloading process deletes everything once it finds the issue gone.
    @Test(.slow, arguments: ["download", "unpack"])
    func removeDuringATransferOrAnUnpackLeavesNothing(phase: String) async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("many.zip").path
            if phase == "unpack" {
                try ArchiveFixtures.manySmallFiles(count: 20_000, bytesEach: 64, format: .zip, to: zip)
            }
            try await withTestServer { server in
                if phase == "unpack" {
                    server.serve("/asset", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                } else {
                    server.serve("/asset", bytes: patternBytes(count: 1 << 20, seed: 3))
                    server.setFaults("/asset", Faults(bytesPerSecond: 256 << 10))
                }
                try await withTemporaryDirectory { lib in
                    _ = try run(["add", "Gone", "--date", "2026-11-20", "--asset", server.url("/asset")], lib)
                    let id = try assetID("Gone", lib)
                    let child = try start(["download"], lib)
                    defer { child.send(SIGKILL) }
                    if phase == "unpack" {
                        let staging = lib.path + "/.staging/\(id)"
                        try waitFor("extraction to start", while: child) {
                            ((try? FileManager.default.contentsOfDirectory(atPath: staging))?.count ?? 0) >= 5
                        }
                    } else {
                        try waitFor("the transfer to start", while: child) {
                            size(lib.path + "/.downloads/\(id).part") > 0
                        }
                    }
                    let removed = try run(["remove", "Gone"], lib)
                    #expect(removed.status == 0, "\(removed.stderr)")
                    let download = try await child.wait()
                    #expect(download.status == 0, "\(download.stderr)")
                    #expect(leftovers(of: id, lib).isEmpty, "\(leftovers(of: id, lib))")
                    #expect(!FileManager.default.fileExists(atPath: lib.path + "/Gone"))
                    #expect(try run(["list", "--json"], lib).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
                    let verify = try run(["verify"], lib)
                    #expect(verify.status == 0, "\(verify.stdout)")
                }
            }
        }
    }

    /// kill -9 while a large archive is being extracted: no half content shows, and `resume` finishes it.
    @Test(.slow) func killNineDuringUnpackThenResume() async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("many.zip").path
            try ArchiveFixtures.manySmallFiles(count: 20_000, bytesEach: 64, format: .zip, to: zip)
            try await withTestServer { server in
                server.serve("/many.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                try await withTemporaryDirectory { lib in
                    _ = try run(["add", "Many", "--date", "2026-11-20", "--asset", server.url("/many.zip")], lib)
                    let id = try assetID("Many", lib)
                    let staging = lib.path + "/.staging/\(id)"
                    let child = try start(["download"], lib)
                    try waitFor("extraction to start", while: child) {
                        ((try? FileManager.default.contentsOfDirectory(atPath: staging))?.count ?? 0) >= 5
                    }
                    child.send(SIGKILL)
                    _ = try await child.wait()
                    let mid = try showJSON("Many", lib)
                    #expect(mid["status"] as? String != "available")
                    let resumed = try run(["resume"], lib)
                    #expect(resumed.status == 0, "\(resumed.stderr)")
                    let folder = lib.appendingPathComponent("Many")
                    let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter {
                        $0.hasSuffix(".txt")
                    }
                    #expect(files.count == 20_000)
                    let sample = try String(
                        contentsOf: folder.appendingPathComponent("d123/f12345.txt"), encoding: .utf8)
                    #expect(sample.hasPrefix("file 12345\n"))
                    #expect(try showJSON("Many", lib)["status"] as? String == "available")
                    #expect(!FileManager.default.fileExists(atPath: staging))
                    // The archive was not fetched again.
                    #expect(server.bodyBytesSent("/many.zip") == size(zip))
                }
            }
        }
    }
}
