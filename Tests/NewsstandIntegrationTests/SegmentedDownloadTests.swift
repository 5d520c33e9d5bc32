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

/// `--segments N` against the test server's faults: every case ends with the exact bytes of one
/// version, and the server's own counters bound what was fetched twice.
@Suite(.timeLimit(.minutes(5))) struct SegmentedDownloadTests {
    static let size = 12 << 20  // three 4 MiB ranges

    func openLibrary(_ root: URL) async throws -> Library {
        var configuration = Library.Configuration()
        configuration.retry = RetryPolicy(
            maxAttemptsWithoutProgress: 4, baseDelay: .milliseconds(20), maxDelay: .milliseconds(100))
        configuration.syncDownloads = false
        return try await Library.open(at: root, configuration: configuration)
    }

    /// Downloads `path` with `segments` and returns the placed bytes and the summary.
    func download(
        _ server: TestHTTPServer, _ path: String, root: URL, sha256: String? = nil, segments: Int = 4
    ) async throws -> ([UInt8]?, DownloadSummary) {
        let library = try await openLibrary(root)
        let url = try #require(URL(string: server.url(path)))
        try await library.addIssue(
            named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!,
            assets: [AssetRequest(url: url, sha256: sha256, unpack: false)])
        let summary = try await library.download(options: DownloadOptions(segments: segments))
        try await library.shutdown()
        let issue = try #require(try await library.issue(named: "Issue"))
        guard let name = issue.assets.first?.fileName else { return (nil, summary) }
        let file = library.contentURL(for: issue).appendingPathComponent(name)
        return (Array(try Data(contentsOf: file)), summary)
    }

    /// The requests after the probe: the ranges, each with `If-Range`.
    func rangeRequests(_ server: TestHTTPServer, _ path: String) -> [RecordedRequest] {
        server.requests(path).filter { $0.header("range") != nil && $0.header("range") != "bytes=0-0" }
    }

    /// Unthrottled (the test server on loopback), one connection takes the ranges in turn.
    @Test func fetchesEveryRangeWithIfRange() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: Self.size, seed: 1)
            server.serve("/big.bin", bytes: body, etag: "\"v1\"")
            try await withTemporaryDirectory { root in
                let (bytes, summary) = try await download(server, "/big.bin", root: root, sha256: sha256Hex(body))
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                #expect(bytes == body)
                let ranges = rangeRequests(server, "/big.bin").compactMap { $0.header("range") }.sorted()
                #expect(ranges == ["bytes=0-4194303", "bytes=4194304-8388607", "bytes=8388608-12582911"])
                #expect(rangeRequests(server, "/big.bin").allSatisfy { $0.header("if-range") == "\"v1\"" })
                // The probe's one byte is the only one fetched twice.
                #expect(server.bodyBytesSent("/big.bin") == body.count + 1)
                let leftovers = try FileManager.default.contentsOfDirectory(
                    atPath: root.appendingPathComponent(".downloads").path)
                #expect(leftovers.filter { !LibraryLayout.isSharedDownloadFile($0) }.isEmpty, "\(leftovers)")
            }
        }
    }

    /// A server that caps each connection gets more of them: every range is asked for before the first
    /// could have finished on its own.
    @Test func aCappedServerGetsAConnectionPerRange() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: Self.size, seed: 9)
            server.serve("/big.bin", bytes: body)
            server.setFaults("/big.bin", Faults(bytesPerSecond: 1 << 20))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let url = try #require(URL(string: server.url("/big.bin")))
                try await library.addIssue(
                    named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!,
                    assets: [AssetRequest(url: url, sha256: sha256Hex(body), unpack: false)])
                var rangesAskedEarly = 0
                let summary = try await library.download(options: DownloadOptions(segments: 3)) { events in
                    for await event in events {
                        // Under one range's worth received in all.
                        if case .progress(let received, _, _) = event.kind, received < 4 << 20 {
                            rangesAskedEarly = max(rangesAskedEarly, rangeRequests(server, "/big.bin").count)
                        }
                    }
                }
                try await library.shutdown()
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                #expect(rangesAskedEarly == 3)
                #expect(server.bodyBytesSent("/big.bin") == body.count + 1)
            }
        }
    }

    /// A cut in one range retries that range alone, from where its bytes end.
    @Test func aCutInOneRangeResumesThatRangeOnly() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: Self.size, seed: 2)
            server.serve("/big.bin", bytes: body)
            server.setFaults("/big.bin", Faults(cutAfterBytes: 1 << 20))
            try await withTemporaryDirectory { root in
                let (bytes, summary) = try await download(server, "/big.bin", root: root, sha256: sha256Hex(body))
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                #expect(bytes == body)
                let ranges = rangeRequests(server, "/big.bin").compactMap { $0.header("range") }
                #expect(ranges.count == 4)
                // The range continues from the bytes that landed: at most the cut's own bytes come twice
                // (those the client had not taken in when the connection closed).
                #expect(server.bodyBytesSent("/big.bin") <= body.count + 1 + (1 << 20), "\(ranges)")
            }
        }
    }

    /// The server honours the probe's range and one more, then sends whole bodies: the download starts
    /// over on one connection and never joins ranges to a full body.
    @Test func aServerThatStopsHonouringRangesFallsBackToOneConnection() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: Self.size, seed: 3)
            server.serve("/big.bin", bytes: body)
            server.setFaults("/big.bin", Faults(honourRangeRequests: 2))
            try await withTemporaryDirectory { root in
                let (bytes, summary) = try await download(server, "/big.bin", root: root, sha256: sha256Hex(body))
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                #expect(bytes == body)
                // The last request is the one-connection download from zero.
                #expect(server.requests("/big.bin").last?.header("range") == nil)
            }
        }
    }

    /// Without ranges (or under two minimum ranges) there is no split: one request after the probe.
    @Test func smallOrUnrangedAssetsUseOneConnection() async throws {
        try await withTestServer { server in
            let small = patternBytes(count: 5 << 20, seed: 4)
            let big = patternBytes(count: Self.size, seed: 5)
            server.serve("/small.bin", bytes: small)
            server.serve("/unranged.bin", bytes: big)
            server.setFaults("/unranged.bin", Faults(ignoreRange: true))
            try await withTemporaryDirectory { root in
                let (bytes, _) = try await download(server, "/small.bin", root: root)
                #expect(bytes == small)
                #expect(server.requests("/small.bin").count == 2)
                #expect(server.bodyBytesSent("/small.bin") == small.count + 1)
            }
            try await withTemporaryDirectory { root in
                let (bytes, _) = try await download(server, "/unranged.bin", root: root)
                #expect(bytes == big)
                // The probe's 200 is dropped at its head; the download is one full body.
                #expect(server.requests("/unranged.bin").count == 2)
                #expect(server.bodyBytesSent("/unranged.bin") < 2 * big.count)
            }
        }
    }

    /// The file is hashed once whole (ranges land out of order); a wrong checksum fails as before and
    /// leaves nothing behind.
    @Test func aWrongChecksumFailsAndDeletesTheFile() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: Self.size, seed: 6)
            server.serve("/big.bin", bytes: body)
            try await withTemporaryDirectory { root in
                let (bytes, summary) = try await download(
                    server, "/big.bin", root: root, sha256: String(repeating: "0", count: 64))
                #expect(bytes == nil)
                #expect(summary.failed.values.first?.contains("SHA-256") == true, "\(summary.failed)")
                let leftovers = try FileManager.default.contentsOfDirectory(
                    atPath: root.appendingPathComponent(".downloads").path)
                #expect(!leftovers.contains { $0.hasSuffix(".part") || $0.hasSuffix(".resume") }, "\(leftovers)")
            }
        }
    }

    /// A run stopped with ranges in flight keeps a plan of what landed; the resource then changes, and
    /// the resume sees the new validator, starts over from zero, and places only the new version.
    @Test func aChangedResourceBetweenRunsIsFetchedAnewNeverJoined() async throws {
        try await withTestServer { server in
            let old = patternBytes(count: Self.size, seed: 7)
            let new = patternBytes(count: Self.size, seed: 8)
            server.serve("/big.bin", bytes: old, etag: "\"old\"")
            server.setFaults("/big.bin", Faults(bytesPerSecond: 2 << 20))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let url = try #require(URL(string: server.url("/big.bin")))
                let issue = try await library.addIssue(
                    named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!,
                    assets: [AssetRequest(url: url, sha256: sha256Hex(new), unpack: false)])
                let id = try #require(issue.assets.first?.id)
                let record = library.layout.resumeRecord(id)
                // Stop once a plan with landed bytes is saved (the tracker saves every MiB of a range).
                let first = try await library.download(options: DownloadOptions(segments: 3)) { events in
                    for await _ in events {
                        if let plan = ResumeRecord.load(record)?.segments, plan.received >= 1 << 20 { break }
                    }
                }
                #expect(first.interrupted == [id])
                let kept = try #require(ResumeRecord.load(record)?.segments)
                #expect(kept.validator == "\"old\"" && kept.segments.count == 3)
                #expect(kept.received >= 1 << 20 && kept.received < Int64(Self.size))

                server.serve("/big.bin", bytes: new, etag: "\"new\"")
                server.setFaults("/big.bin", Faults())
                server.resetCounters()
                let summary = try await library.resumeDownloads(options: DownloadOptions(segments: 3))
                try await library.shutdown()
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                let placed = try #require(try await library.issue(named: "Issue"))
                let file = library.contentURL(for: placed).appendingPathComponent("big.bin")
                #expect(Array(try Data(contentsOf: file)) == new)
            }
        }
    }
}

extension SegmentedDownloadTests {
    /// A plan saved in another boot may claim bytes a power cut took from the page cache: it is dropped and
    /// the download starts over.
    @Test func aPlanFromAnotherBootIsNotTrusted() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: Self.size, seed: 10)
            server.serve("/big.bin", bytes: body)
            server.setFaults("/big.bin", Faults(bytesPerSecond: 2 << 20))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let url = try #require(URL(string: server.url("/big.bin")))
                let issue = try await library.addIssue(
                    named: "Issue", date: IssueDate(year: 2026, month: 11, day: 23)!,
                    assets: [AssetRequest(url: url, sha256: sha256Hex(body), unpack: false)])
                let record = library.layout.resumeRecord(try #require(issue.assets.first?.id))
                _ = try await library.download(options: DownloadOptions(segments: 3)) { events in
                    for await _ in events {
                        if let plan = ResumeRecord.load(record)?.segments, plan.received >= 1 << 20 { break }
                    }
                }
                var saved = try #require(ResumeRecord.load(record))
                #expect(saved.segments?.bootID == SegmentPlan.currentBootID)
                saved.segments?.bootID = "another boot"
                try saved.save(record)

                server.setFaults("/big.bin", Faults())
                server.resetCounters()
                let summary = try await library.resumeDownloads(options: DownloadOptions(segments: 3))
                try await library.shutdown()
                #expect(summary.failed.isEmpty, "\(summary.failed)")
                // Every byte was fetched again, from the probe on.
                #expect(server.bodyBytesSent("/big.bin") >= body.count)
                let placed = try #require(try await library.issue(named: "Issue"))
                let file = library.contentURL(for: placed).appendingPathComponent("big.bin")
                #expect(Array(try Data(contentsOf: file)) == body)
            }
        }
    }
}
