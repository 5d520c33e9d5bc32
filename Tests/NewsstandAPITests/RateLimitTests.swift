import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

/// `DownloadOptions.rateLimit` against the real test server: one budget for the whole run. The bands
/// are generous: this checks the behaviour (held, and shared), the benchmark measures precision.
@Suite(.timeLimit(.minutes(2))) struct RateLimitTests {
    @Test func oneTransferKeepsToTheRate() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 2 << 20)
            server.serve("/a.bin", bytes: body)
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/a.bin"))])
                    let started = ContinuousClock.now
                    let summary = try await library.download(options: DownloadOptions(rateLimit: 512 << 10))
                    let took = ContinuousClock.now - started
                    #expect(summary.finished.count == 1)
                    // The limit is a floor on the time; the ceiling only catches a hang (a loaded CI machine is slow).
                    #expect(took > .milliseconds(3_200) && took < .seconds(60), "2 MiB at 512 KiB/s took \(took)")
                    let file = try #require(try await library.issue(named: "A")?.assets.first?.fileURL)
                    #expect(FileManager.default.contents(atPath: file.path) == Data(body))
                }
            }
        }
    }

    @Test func concurrentTransfersShareOneBudget() async throws {
        try await withTestServer { server in
            let paths = ["/a.bin", "/b.bin", "/c.bin"]
            for path in paths { server.serve(path, bytes: patternBytes(count: 1 << 20)) }
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date,
                        assets: try paths.map { AssetRequest(url: try API.url(server, $0)) })
                    let started = ContinuousClock.now
                    // Three at once, 3 MiB in all, at 1 MiB/s for the run: about 3 s, not 1 s.
                    let summary = try await library.download(
                        options: DownloadOptions(jobs: 3, rateLimit: 1 << 20))
                    let took = ContinuousClock.now - started
                    #expect(summary.finished.count == 3)
                    // One shared budget: three transfers at 1 MiB/s each would take about 1 s, not 3.
                    #expect(took > .milliseconds(2_400) && took < .seconds(60), "3 × 1 MiB at 1 MiB/s took \(took)")
                }
            }
        }
    }
}
