import Foundation
import NewsstandTestSupport
import Testing

/// `-v` logs each request and its answer (method, URL, status, redirect, validators, bytes, time), `-vv`
/// the retries too; no credential ever shows.
@Suite(.timeLimit(.minutes(5))) struct VerboseCLITests {
    static let password = "v3rbose-pa55"

    @Test func verboseShowsRequestsAndAnswersWithoutCredentials() async throws {
        try await withTestServer { server in
            server.serve("/real/ep1.mp3", bytes: patternBytes(count: 4_000, seed: 9))
            server.setFaults("/ep1.mp3", Faults(redirectTo: server.url("/real/ep1.mp3")))
            server.serve(
                "/feed.xml",
                bytes: SubscriptionCLITests.rss([
                    .init(guid: "1", title: "One", date: "Fri, 20 Nov 2026 06:00:00 GMT", url: server.url("/ep1.mp3"))
                ]), contentType: "application/rss+xml")
            let base = "127.0.0.1:\(server.port)"
            try await withTemporaryDirectory { lib in
                var r = try CommandRunner.issues(
                    ["subscribe", "http://reader:\(Self.password)@\(base)/feed.xml", "--name", "V", "-v",
                     "--header", "Cookie: c=\(Self.password)"], library: lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stderr.contains("issues: info: GET http://\(base)/feed.xml"), "\(r.stderr)")
                #expect(r.stderr.contains("issues: info: 200 OK http://\(base)/feed.xml "), "\(r.stderr)")
                #expect(r.stderr.contains(" bytes in "), "\(r.stderr)")
                #expect(r.stderr.contains("ETag: \""), "\(r.stderr)")
                #expect(r.stderr.contains("302 Found http://\(base)/ep1.mp3 "), "\(r.stderr)")
                #expect(r.stderr.contains("→ http://\(base)/real/ep1.mp3"), "\(r.stderr)")
                #expect(r.stderr.contains("200 OK http://\(base)/real/ep1.mp3 4000 bytes in"), "\(r.stderr)")
                #expect(!r.stderr.contains(Self.password) && !r.stdout.contains(Self.password))

                // The next sync sends its validators, and says so.
                r = try CommandRunner.issues(["sync", "-v"], library: lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stderr.contains("GET http://\(base)/feed.xml If-None-Match: \""), "\(r.stderr)")
                #expect(!r.stderr.contains(Self.password))

                // ISSUES_LOG_LEVEL does the same without the flag; without either, nothing is logged.
                r = try CommandRunner.issues(["sync"], library: lib, environment: ["ISSUES_LOG_LEVEL": "info"])
                #expect(r.stderr.contains("issues: info: GET http://\(base)/feed.xml"), "\(r.stderr)")
                r = try CommandRunner.issues(["sync"], library: lib)
                #expect(!r.stderr.contains("issues: info:"), "\(r.stderr)")
            }
        }
    }

    /// Issue 46 item 2: token-like query values of an asset URL (API keys, signed-URL signatures) never reach
    /// `-v`'s lines, while the download still uses them and `export` gives the URL back whole.
    @Test func verboseHidesTokenLikeQueryValues() async throws {
        let secret = "t0ken-s3cret"
        try await withTestServer { server in
            server.serve("/a.bin", bytes: patternBytes(count: 3_000, seed: 4))
            let url = server.url("/a.bin") + "?api_key=\(secret)&page=2&X-Amz-Signature=\(secret)9"
            try await withTemporaryDirectory { lib in
                var r = try CommandRunner.issues(["add", "T", "--date", "2026-11-20", "--asset", url], library: lib)
                #expect(r.status == 0, "\(r.stderr)")
                r = try CommandRunner.issues(["download", "T", "-vv"], library: lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stderr.contains("GET http://127.0.0.1:\(server.port)/a.bin?api_key=***&page=2&X-Amz-Signature=***"), "\(r.stderr)")
                #expect(r.stderr.contains("200 OK"), "\(r.stderr)")
                #expect(!r.stderr.contains(secret), "\(r.stderr)")
                r = try CommandRunner.issues(["export"], library: lib)
                #expect(r.status == 0 && r.stdout.contains(secret), "export keeps the URL as it must be fetched")
            }
        }
    }

    @Test func doubleVerboseShowsRetries() async throws {
        try await withTestServer { server in
            server.serve("/flaky.bin", bytes: patternBytes(count: 4_000, seed: 10))
            server.setFaults("/flaky.bin", Faults(unavailableResponses: 1, retryAfter: "1"))
            try await withTemporaryDirectory { lib in
                var r = try CommandRunner.issues(
                    ["add", "Flaky", "--date", "2026-11-20", "--asset", server.url("/flaky.bin")], library: lib)
                #expect(r.status == 0, "\(r.stderr)")
                r = try CommandRunner.issues(["download", "-vv"], library: lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stderr.contains("503 Service Unavailable http://127.0.0.1:\(server.port)/flaky.bin"), "\(r.stderr)")
                #expect(r.stderr.contains("issues: debug: retry 1 in"), "\(r.stderr)")
            }
        }
    }
}
