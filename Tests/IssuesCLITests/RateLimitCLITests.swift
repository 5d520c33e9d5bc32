import Foundation
import NewsstandTestSupport
import Testing

/// `--limit-rate` with many transfers at once, through the built `issues` binary against the test server.
@Suite(.timeLimit(.minutes(5))) struct RateLimitCLITests {
    /// Served first come, first served, the budget let a transfer wait for the others' parts for longer than a
    /// short stall window, and the wait counted as its server stalling: with `--jobs 8 --limit-rate 4K`, 6 of 8
    /// were given up as "stalled". Shared fairly, and with the limiter's waits left out of the stall windows,
    /// all eight finish, none stalls, and the run as a whole still keeps to the rate.
    @Test(.slow) func eightTransfersShareASmallBudgetAndNoneStalls() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { lib in
                let size = 6_000
                let count = 8
                for i in 0..<count {
                    server.serve("/part-\(i).pdf", bytes: patternBytes(count: size, seed: UInt64(i + 1)))
                    let r = try CommandRunner.issues(
                        ["add", "Part \(i)", "--date", "2026-11-2\(i)", "--asset", server.url("/part-\(i).pdf")],
                        library: lib)
                    #expect(r.status == 0, "\(r.stderr)")
                }
                let started = ContinuousClock.now
                let r = try CommandRunner.issues(
                    [
                        "download", "--no-covers", "--jobs", "8", "--limit-rate", "4K", "--stall-bytes", "1K",
                        "--stall-seconds", "1",
                    ], library: lib)
                let took = ContinuousClock.now - started
                #expect(r.status == 0, "\(r.stderr)")
                #expect(!r.stderr.contains("stalled"), "\(r.stderr)")
                let list = try CommandRunner.issues(["list", "--json"], library: lib)
                let issues = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
                #expect(issues.count == count)
                for issue in issues {
                    #expect(issue["status"] as? String == "available", "\(issue)")
                }
                // 48,000 bytes at 4 KiB/s: about 11.7 s. The bands of the other limit-rate tests: the limit is a
                // floor on the time (at most 1.25 × the rate on average), the ceiling only catches a hang.
                let nominal = Double(size * count) / 4096
                #expect(took > .seconds(nominal * 0.8) && took < .seconds(60), "\(size * count) bytes at 4 KiB/s took \(took)")
            }
        }
    }
}
