import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The automatic default: no probe. A large fresh download stays on its first connection unless that
/// connection is capped; then the first response's bytes stay and the rest goes on in ranges.
@Suite(.timeLimit(.minutes(5))) struct AutomaticSegmentTests {
    /// Downloads the 64 MiB `/huge.bin` with automatic segments (the default) into a fresh library.
    private func download(
        _ server: TestHTTPServer, body: [UInt8], uncappedRate: Double = SegmentRamp.uncapped, rateLimit: Int64? = nil
    ) async throws -> DownloadSummary {
        try await withTemporaryDirectory { root in
            var configuration = Library.Configuration()
            configuration.syncDownloads = false
            configuration.engine.uncappedRate = uncappedRate
            let library = try await Library.open(at: root, configuration: configuration)
            let url = try #require(URL(string: server.url("/huge.bin")))
            try await library.addIssue(
                named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!,
                assets: [AssetRequest(url: url, sha256: sha256Hex(body), unpack: false)])
            let summary = try await library.download(options: DownloadOptions(rateLimit: rateLimit))
            try await library.shutdown()
            #expect(summary.failed.isEmpty, "\(summary.failed)")
            let issue = try #require(try await library.issue(named: "Issue"))
            let file = library.contentURL(for: issue).appendingPathComponent("huge.bin")
            #expect(Array(try Data(contentsOf: file)) == body)
            return summary
        }
    }

    private func hugeBody(_ seed: Int) -> [UInt8] {
        var body = [UInt8](repeating: UInt8(truncatingIfNeeded: seed), count: Int(SegmentPlan.automaticThreshold))
        for index in stride(from: 0, to: body.count, by: seed) { body[index] = UInt8(truncatingIfNeeded: index / seed) }
        return body
    }

    /// An uncapped server keeps the one connection: one request, the whole body, no range. (Uncapped here
    /// means faster than 1 MiB/s, so that a loaded machine's loopback is sure to be.)
    @Test func anUncappedFirstResponseIsNeverSplit() async throws {
        try await withTestServer { server in
            let body = hugeBody(4099)
            server.serve("/huge.bin", bytes: body, etag: "\"h1\"")
            let summary = try await download(server, body: body, uncappedRate: Double(1 << 20))
            let requests = server.requests("/huge.bin")
            #expect(requests.count == 1)
            #expect(requests.first?.header("range") == nil)
            #expect(summary.bytesReceived == Int64(body.count))
        }
    }

    /// A run's own rate limit under the uncapped rate (48 MiB/s) is no server's cap: no split, one request.
    @Test func aRunsOwnRateLimitIsNotTakenForACap() async throws {
        try await withTestServer { server in
            let body = hugeBody(4079)
            server.serve("/huge.bin", bytes: body, etag: "\"h1\"")
            _ = try await download(server, body: body, rateLimit: 48 << 20)
            #expect(server.requests("/huge.bin").count == 1)
        }
    }

    /// A capped first response (32 MiB/s, under SegmentRamp's 64 MiB/s) ends after one window; its bytes
    /// stay, and every range opens at once from where it stopped, each with If-Range: no byte twice.
    @Test func aCappedFirstResponseContinuesInRangesKeepingItsBytes() async throws {
        try await withTestServer { server in
            let body = hugeBody(4091)
            server.serve("/huge.bin", bytes: body, etag: "\"h1\"")
            server.setFaults("/huge.bin", Faults(bytesPerSecond: 32 << 20))
            let summary = try await download(server, body: body)
            let requests = server.requests("/huge.bin")
            #expect(requests.first?.header("range") == nil)
            let ranges = requests.dropFirst().compactMap { $0.header("range") }
            #expect(requests.dropFirst().allSatisfy { $0.header("if-range") == "\"h1\"" })
            // The ranges asked for continue exactly where the first response stopped (after byte 0) and cover
            // the rest once: as many as the ranges not yet whole then, at most one per range.
            let spans = ranges.compactMap { text -> (Int, Int)? in
                let bounds = text.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
                return bounds.count == 2 ? (bounds[0], bounds[1]) : nil
            }.sorted { $0.0 < $1.0 }
            #expect(spans.count == ranges.count, "\(ranges)")
            #expect((1...SegmentPlan.automaticCount).contains(spans.count), "\(ranges)")
            #expect((spans.first?.0 ?? 0) > 0, "\(ranges)")
            #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.1 + 1 == $1.0 }, "\(ranges)")
            #expect(spans.last?.1 == body.count - 1, "\(ranges)")
            #expect(summary.bytesReceived == Int64(body.count))
        }
    }

    /// An automatic split whose second range comes back whole goes on from zero on one connection, into the
    /// same partial file.
    @Test func anAutomaticSplitThatMeetsAWholeBodyGoesOnOnOneConnection() async throws {
        try await withTestServer { server in
            var body = [UInt8](repeating: 0x33, count: Int(SegmentPlan.automaticThreshold))
            for index in stride(from: 0, to: body.count, by: 4093) { body[index] = UInt8(truncatingIfNeeded: index / 4093) }
            server.serve("/huge.bin", bytes: body)
            // Capped, so that the first response is split at all.
            server.setFaults("/huge.bin", Faults(bytesPerSecond: 32 << 20, honourRangeRequests: 1))
            try await withTemporaryDirectory { root in
                var configuration = Library.Configuration()
                configuration.syncDownloads = false
                let library = try await Library.open(at: root, configuration: configuration)
                let url = try #require(URL(string: server.url("/huge.bin")))
                try await library.addIssue(
                    named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!,
                    assets: [AssetRequest(url: url, sha256: sha256Hex(body), unpack: false)])
                let summary = try await library.download()
                try await library.shutdown()
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                let issue = try #require(try await library.issue(named: "Issue"))
                let file = library.contentURL(for: issue).appendingPathComponent("huge.bin")
                #expect(Array(try Data(contentsOf: file)) == body)
                let requests = server.requests("/huge.bin")
                // It was split (a range went out), and what finished it was one whole body.
                #expect(requests.contains { $0.header("range") != nil })
                #expect(requests.last?.header("range") == nil)
            }
        }
    }
}
