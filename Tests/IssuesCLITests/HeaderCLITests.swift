import Foundation
import NewsstandTestSupport
import Testing

/// `add-asset --header`, `import` with headers, and every place that must not print them in full.
@Suite(.timeLimit(.minutes(5))) struct HeaderCLITests {
    static let secret = "t0p-s3cret-t0ken"

    func run(_ args: [String], _ library: URL, stdin: String? = nil) throws -> CommandResult {
        try CommandRunner.issues(args, library: library, stdin: stdin)
    }

    @Test func headersAreSentAndNeverPrintedInFull() async throws {
        try await withTestServer { server in
            server.serve("/paid.pdf", bytes: patternBytes(count: 10_000))
            try await withTemporaryDirectory { lib in
                var r = try run(["add", "Paid", "--date", "2026-11-20"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                r = try run(
                    [
                        "add-asset", "Paid", server.url("/paid.pdf"), "--header", "Authorization: Bearer \(Self.secret)",
                        "--header", "Cookie: session=\(Self.secret)",
                    ], lib)
                #expect(r.status == 0, "\(r.stderr)")

                r = try run(["download", "Paid"], lib)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(server.requests("/paid.pdf").first?.header("Authorization") == "Bearer \(Self.secret)")
                #expect(!r.stdout.contains(Self.secret) && !r.stderr.contains(Self.secret))

                r = try run(["show", "Paid"], lib)
                #expect(r.stdout.contains("header: Authorization: Bearer …(redacted)"))
                #expect(r.stdout.contains("header: Cookie: …(redacted)"))
                for args in [["show", "Paid", "--json"], ["list", "--json"], ["export"]] {
                    r = try run(args, lib)
                    #expect(r.status == 0)
                    #expect(!r.stdout.contains(Self.secret), "\(args) printed a header value")
                }
                r = try run(["show", "Paid", "--json"], lib)
                #expect(r.stdout.contains("\"Authorization\":\"Bearer …(redacted)\""))
                r = try run(["export"], lib)
                #expect(r.stderr.contains("request headers of 1 asset(s) were left out"))

                // Asked for, the export carries them, and imports as the same headers.
                r = try run(["export", "--include-headers"], lib)
                #expect(r.stdout.contains("Bearer \(Self.secret)"))
                let other = lib.appendingPathComponent("other")
                let imported = try run(["import", "-"], other, stdin: r.stdout)
                #expect(imported.status == 0, "\(imported.stderr)")
                r = try run(["export", "--include-headers"], other)
                #expect(r.stdout.contains("\"Cookie\":\"session=\(Self.secret)\""))
            }
        }
    }

    @Test(arguments: [["--header", "no colon"], ["--header", "Range: bytes=0-"], ["--header", "A: 1", "--header", "a: 2"]])
    func badHeadersAreUsageErrors(extra: [String]) async throws {
        try await withTemporaryDirectory { lib in
            #expect(try run(["add", "Paid", "--date", "2026-11-20"], lib).status == 0)
            let r = try run(["add-asset", "Paid", "https://example.com/a.pdf"] + extra, lib)
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderr.contains("--header"))
        }
    }
}
