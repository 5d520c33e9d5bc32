import Foundation
import NewsstandTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Credentials in feed and asset URLs (`http://user:pass@host/feed`) and `subscribe --header`: sent to
/// their own origin only, kept in a 0600 file, and never in an output line or a file others may read.
@Suite(.timeLimit(.minutes(5))) struct CredentialCLITests {
    static let password = "pa55-w0rd-s3cret"
    static let token = "t0k3n-v4lue-s3cret"
    static let basic = "Basic " + Data("reader:\(password)".utf8).base64EncodedString()

    func run(_ args: [String], _ library: URL) throws -> CommandResult {
        try CommandRunner.issues(args, library: library)
    }

    /// Every regular file under `root` that its group or others may read, with its bytes.
    func filesReadableByOthers(_ root: URL) -> [(String, Data)] {
        var found: [(String, Data)] = []
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        for case let relative as String in walker {
            let path = root.path + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            if info.st_mode & 0o044 != 0, let data = FileManager.default.contents(atPath: path) {
                found.append((relative, data))
            }
        }
        return found
    }

    @Test func basicAuthGoesToTheOriginOnlyAndNothingShowsIt() async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                // Two episodes on the feed's origin; the second redirects to another origin (another port).
                origin.serve("/ep1.mp3", bytes: patternBytes(count: 3_000, seed: 1))
                origin.setFaults("/ep2.mp3", Faults(redirectTo: other.url("/ep2.mp3")))
                other.serve("/ep2.mp3", bytes: patternBytes(count: 3_000, seed: 2))
                origin.serve(
                    "/feed.xml",
                    bytes: SubscriptionCLITests.rss([
                        .init(guid: "1", title: "One", date: "Fri, 20 Nov 2026 06:00:00 GMT", url: origin.url("/ep1.mp3")),
                        .init(guid: "2", title: "Two", date: "Sat, 21 Nov 2026 06:00:00 GMT", url: origin.url("/ep2.mp3")),
                    ]), contentType: "application/rss+xml")
                let feedURL = "http://reader:\(Self.password)@127.0.0.1:\(origin.port)/feed.xml"
                try await withTemporaryDirectory { lib in
                    var outputs: [CommandResult] = []
                    var r = try run(
                        ["subscribe", feedURL, "--name", "Private", "--initial", "all", "--header", "X-Token: \(Self.token)"],
                        lib)
                    outputs.append(r)
                    #expect(r.status == 0, "\(r.stderr)")

                    // The feed and the asset on its origin got Basic auth; the redirect target got nothing.
                    let feedRequest = try #require(origin.requests("/feed.xml").first)
                    #expect(feedRequest.header("Authorization") == Self.basic)
                    #expect(feedRequest.header("X-Token") == Self.token)
                    #expect(origin.requests("/ep1.mp3").first?.header("Authorization") == Self.basic)
                    #expect(origin.requests("/ep2.mp3").first?.header("Authorization") == Self.basic)
                    let crossed = try #require(other.requests("/ep2.mp3").first)
                    #expect(crossed.header("Authorization") == nil)
                    #expect(crossed.header("X-Token") == nil)
                    #expect(origin.requests("/ep1.mp3").first?.header("X-Token") == nil, "a feed's header went to an asset")

                    // A plain `sync` (the cron line) sends them again from the credentials file.
                    r = try run(["sync"], lib)
                    outputs.append(r)
                    #expect(r.status == 0, "\(r.stderr)")
                    let again = origin.requests("/feed.xml")
                    #expect(again.count == 2)
                    #expect(again.last?.header("Authorization") == Self.basic)
                    #expect(again.last?.header("X-Token") == Self.token)

                    for args in [
                        ["subscriptions"], ["subscriptions", "--json"], ["list"], ["list", "--json"], ["show", "One"],
                        ["show", "One", "--json"], ["export"], ["verify"],
                    ] {
                        r = try run(args, lib)
                        #expect(r.status == 0, "\(args): \(r.stderr)")
                        outputs.append(r)
                    }
                    // A failure names the URL with its password masked.
                    r = try run(["subscribe", "http://reader:\(Self.password)@127.0.0.1:\(origin.port)/missing.xml"], lib)
                    outputs.append(r)
                    #expect(r.status == 1)
                    #expect(r.stderr.contains("http://reader:***@127.0.0.1:\(origin.port)/missing.xml"), "\(r.stderr)")
                    // Even on a usage error.
                    r = try run(["subscribe", "http://reader:\(Self.password)@127.0.0.1:99999/feed.xml"], lib)
                    outputs.append(r)
                    #expect(r.status == 64, "\(r.stderr)")

                    for output in outputs {
                        for secret in [Self.password, Self.token] {
                            #expect(!output.stdout.contains(secret) && !output.stderr.contains(secret), "\(output)")
                        }
                    }
                    // The secrets are on disk only in the 0600 file.
                    let secrets = lib.appendingPathComponent(".credentials.json").path
                    var info = stat()
                    #expect(lstat(secrets, &info) == 0)
                    #expect(info.st_mode & 0o777 == 0o600)
                    let stored = try String(contentsOfFile: secrets, encoding: .utf8)
                    #expect(stored.contains(Self.password) && stored.contains(Self.token))
                    let readable = filesReadableByOthers(lib)
                    #expect(readable.contains { $0.0.hasPrefix(".catalog/") }, "the walk found no catalog file")
                    for (path, data) in readable {
                        let text = String(decoding: data, as: UTF8.self)
                        #expect(!text.contains(Self.password) && !text.contains(Self.token), "\(path) holds a secret")
                    }
                }
            }
        }
    }

    /// `add --asset` with a password in the URL: the record keeps `reader@` (shown `reader:***@`), the
    /// download signs in.
    @Test func assetURLCredentialsAreStoredApartAndSent() async throws {
        try await withTestServer { server in
            server.serve("/paid.bin", bytes: patternBytes(count: 5_000, seed: 3))
            try await withTemporaryDirectory { lib in
                let url = "http://reader:\(Self.password)@127.0.0.1:\(server.port)/paid.bin"
                var r = try run(["add", "Paid", "--date", "2026-11-20", "--asset", url], lib)
                #expect(r.status == 0, "\(r.stderr)")
                r = try run(["download"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(server.requests("/paid.bin").first?.header("Authorization") == Self.basic)
                // The request line carries no user information.
                #expect(server.requests("/paid.bin").first?.uri == "/paid.bin")
                r = try run(["show", "Paid"], lib)
                #expect(r.stdout.contains("http://reader:***@127.0.0.1:\(server.port)/paid.bin"), "\(r.stdout)")
                #expect(!r.stdout.contains(Self.password))
                for (path, data) in filesReadableByOthers(lib) {
                    #expect(!String(decoding: data, as: UTF8.self).contains(Self.password), "\(path) holds it")
                }
            }
        }
    }
}
