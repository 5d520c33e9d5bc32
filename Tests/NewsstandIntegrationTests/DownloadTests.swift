import Foundation
import NewsstandTestSupport
import Synchronization
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The downloader against a real HTTP server on 127.0.0.1 with injected faults.
@Suite(.timeLimit(.minutes(5))) struct DownloadTests {
    static let date = IssueDate(year: 2026, month: 11, day: 20)!

    /// A library with fast retries, so fault tests do not wait on production backoff.
    func openLibrary(_ root: URL, limits: UnpackLimits = .default) async throws -> Library {
        var configuration = Library.Configuration()
        configuration.retry = RetryPolicy(
            maxAttemptsWithoutProgress: 4, baseDelay: .milliseconds(20), maxDelay: .milliseconds(100))
        configuration.unpackLimits = limits
        configuration.syncDownloads = false
        return try await Library.open(at: root, configuration: configuration)
    }

    /// Adds one issue with one asset and downloads it; returns the library, the asset and the events.
    func fetchOne(
        _ server: TestHTTPServer, path: String, root: URL, sha256: String? = nil, unpack: Bool = true,
        limits: UnpackLimits = .default, options: DownloadOptions = DownloadOptions()
    ) async throws -> (Library, AssetDownload, [DownloadEvent], DownloadSummary) {
        let library = try await openLibrary(root, limits: limits)
        let url = try #require(URL(string: server.url(path)))
        try await library.addIssue(
            named: "Issue", date: DownloadTests.date, assets: [AssetRequest(url: url, sha256: sha256, unpack: unpack)])
        let events = EventLog()
        let summary = try await library.download(options: options) { for await event in $0 { events.append(event) } }
        try await library.shutdown()
        let asset = try #require(await library.issue(named: "Issue")?.assets.first)
        return (library, asset, events.all, summary)
    }

    func contentFile(_ library: Library, _ name: String) async throws -> [UInt8] {
        let issue = try #require(await library.issue(named: "Issue"))
        return Array(try Data(contentsOf: library.contentURL(for: issue).appendingPathComponent(name)))
    }

    @Test func plainDownloadIsPlacedAndVerified() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 300_000)
            server.serve("/papers/report.pdf", bytes: body)
            try await withTemporaryDirectory { root in
                let (library, asset, events, summary) = try await fetchOne(
                    server, path: "/papers/report.pdf", root: root, sha256: sha256Hex(body))
                #expect(summary.finished == [asset.id])
                #expect(asset.state == .downloaded)
                #expect(asset.fileName == "report.pdf")
                #expect(asset.receivedBytes == 300_000 && asset.expectedBytes == 300_000)
                #expect(try await contentFile(library, "report.pdf") == body)
                #expect(try await library.issue(named: "Issue")?.status == .available)
                #expect(try await library.downloadingAssets().isEmpty)
                #expect(server.bodyBytesSent("/papers/report.pdf") == body.count)
                #expect(events.contains { if case .finished = $0.kind { true } else { false } })
                // Nothing is left in the library's work areas.
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".downloads").path)
                        .filter { !LibraryLayout.isSharedDownloadFile($0) }.isEmpty)
                // A saved download of a complete asset (put back by hand, or by a restored backup) is not a
                // download in progress, and the next resume drops it.
                let layout = LibraryLayout(root: root.path)
                try SQLiteShell.run(
                    layout.database,
                    "INSERT INTO pending (asset_id, issue_key) VALUES ('\(asset.id)', '\(Catalog.key(for: "Issue"))')")
                #expect(try await library.downloadingAssets().isEmpty)
                _ = try await library.resumeDownloads()
                #expect(try Catalog(layout: layout).pendingMarkers().isEmpty)
            }
        }
    }

    /// A finished download's resume record is emptied and kept, and the next download (here of a later
    /// run) takes that file rather than creating one.
    @Test func aLaterDownloadReusesAFinishedDownloadsRecordFile() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { root in
                let library = try await Library.open(at: root)
                let date = IssueDate(year: 2026, month: 11, day: 20)!
                func spares() throws -> [String: UInt64] {
                    let downloads = library.layout.downloads
                    var found: [String: UInt64] = [:]
                    for name in (try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []
                    where name.hasPrefix(LibraryLayout.recordSparePrefix) {
                        var info = stat()
                        if stat("\(downloads)/\(name)", &info) == 0 { found[name] = UInt64(info.st_ino) }
                    }
                    return found
                }
                for n in 0..<2 {
                    let body = patternBytes(count: 20_000, seed: UInt64(n))
                    server.serve("/a\(n).bin", bytes: body)
                    let url = try #require(URL(string: server.url("/a\(n).bin")))
                    try await library.addIssue(named: "Issue \(n)", date: date, assets: [AssetRequest(url: url)])
                    let before = try spares()
                    let summary = try await library.download(issues: ["Issue \(n)"])
                    #expect(summary.finished.count == 1)
                    let issue = try #require(await library.issue(named: "Issue \(n)"))
                    let file = library.contentURL(for: issue).appendingPathComponent("a\(n).bin")
                    #expect(Array(try Data(contentsOf: file)) == body)
                    let after = try spares()
                    #expect(after.count == 1, "\(after)")
                    // The second run found the first run's spare and put the same file back.
                    if n == 1 { #expect(Set(after.values) == Set(before.values), "\(before) \(after)") }
                }
                try await library.shutdown()
            }
        }
    }

    @Test func connectionCutOnceResumesWithRangeAndIfRange() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 1_000_000, seed: 7)
            server.serve("/a.bin", bytes: body, etag: "\"a1\"")
            server.setFaults("/a.bin", Faults(cutAfterBytes: 400_000))
            try await withTemporaryDirectory { root in
                let (library, asset, events, _) = try await fetchOne(
                    server, path: "/a.bin", root: root, sha256: sha256Hex(body))
                #expect(asset.state == .downloaded)
                #expect(try await contentFile(library, "a.bin") == body)
                let requests = server.requests("/a.bin")
                #expect(requests.count == 2)
                #expect(requests.last?.header("range") == "bytes=400000-")
                #expect(requests.last?.header("if-range") == "\"a1\"")
                // Not a byte fetched twice.
                #expect(server.bodyBytesSent("/a.bin") == body.count)
                #expect(events.contains { if case .retrying = $0.kind { true } else { false } })
            }
        }
    }

    @Test func connectionCutOnEveryResponseStillCompletes() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 600_000, seed: 8)
            server.serve("/flaky.bin", bytes: body)
            server.setFaults("/flaky.bin", Faults(cutAfterBytes: 100_000, cutResponses: .max))
            try await withTemporaryDirectory { root in
                let (library, asset, _, _) = try await fetchOne(
                    server, path: "/flaky.bin", root: root, sha256: sha256Hex(body))
                #expect(asset.state == .downloaded)
                #expect(try await contentFile(library, "flaky.bin") == body)
                #expect(server.requestCount("/flaky.bin") == 6)
                #expect(server.bodyBytesSent("/flaky.bin") == body.count)
            }
        }
    }

    @Test func truncatedBodyWithFullContentLengthIsResumed() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 500_000, seed: 9)
            server.serve("/t.bin", bytes: body)
            server.setFaults("/t.bin", Faults(truncateAfterBytes: 200_000))
            try await withTemporaryDirectory { root in
                let (library, asset, _, _) = try await fetchOne(server, path: "/t.bin", root: root)
                #expect(asset.state == .downloaded)
                #expect(try await contentFile(library, "t.bin") == body)
                #expect(server.bodyBytesSent("/t.bin") == body.count)
            }
        }
    }

    @Test func serverIgnoringRangeRestartsFromZeroNeverAppends() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 400_000, seed: 10)
            server.serve("/ir.bin", bytes: body)
            server.setFaults("/ir.bin", Faults(cutAfterBytes: 150_000, ignoreRange: true))
            try await withTemporaryDirectory { root in
                let (library, asset, _, _) = try await fetchOne(
                    server, path: "/ir.bin", root: root, sha256: sha256Hex(body))
                #expect(asset.state == .downloaded)
                #expect(try await contentFile(library, "ir.bin") == body)
                #expect(server.requests("/ir.bin").last?.header("range") == "bytes=150000-")
                #expect(server.bodyBytesSent("/ir.bin") == 150_000 + body.count)
            }
        }
    }

    @Test func changedValidatorRestartsWithTheNewContent() async throws {
        try await withTestServer { server in
            let old = patternBytes(count: 300_000, seed: 11)
            let new = patternBytes(count: 350_000, seed: 12)
            server.serve("/c.bin", bytes: old, etag: "\"v1\"")
            server.setFaults("/c.bin", Faults(cutAfterBytes: 100_000))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let url = try #require(URL(string: server.url("/c.bin")))
                try await library.addIssue(named: "Issue", date: DownloadTests.date, assets: [AssetRequest(url: url)])
                // The first attempt is cut; before the retry the publisher replaces the file.
                let swapped = Flag()
                let summary = try await library.download { events in
                    for await event in events {
                        if case .retrying = event.kind, swapped.setOnce() {
                            server.serve("/c.bin", bytes: new, etag: "\"v2\"")
                        }
                    }
                }
                try await library.shutdown()
                #expect(summary.finished.count == 1)
                #expect(try await contentFile(library, "c.bin") == new)
                #expect(server.requests("/c.bin").last?.header("if-range") == "\"v1\"")
            }
        }
    }

    @Test func serviceUnavailableHonoursRetryAfter() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 10_000)
            server.serve("/busy.bin", bytes: body)
            server.setFaults("/busy.bin", Faults(unavailableResponses: 2, retryAfter: "1"))
            try await withTemporaryDirectory { root in
                let start = ContinuousClock.now
                let (_, asset, events, _) = try await fetchOne(server, path: "/busy.bin", root: root)
                #expect(asset.state == .downloaded)
                #expect(ContinuousClock.now - start >= .milliseconds(1900))
                let delays = events.compactMap { if case .retrying(_, let delay, _) = $0.kind { delay } else { nil } }
                #expect(delays == [.seconds(1), .seconds(1)])
                #expect(server.requestCount("/busy.bin") == 3)
            }
        }
    }

    @Test(arguments: [404, 403, 410])
    func permanentStatusFailsAtOnce(_ status: Int) async throws {
        try await withTestServer { server in
            server.serve("/gone.pdf", bytes: [1, 2, 3])
            server.setFaults("/gone.pdf", Faults(status: status))
            try await withTemporaryDirectory { root in
                let (library, asset, _, summary) = try await fetchOne(server, path: "/gone.pdf", root: root)
                #expect(asset.state == .failed)
                #expect(asset.error?.contains("\(status)") == true)
                #expect(asset.error?.contains(server.url("/gone.pdf")) == true)
                #expect(summary.failed[asset.id] != nil)
                #expect(server.requestCount("/gone.pdf") == 1)
                #expect(try await library.issue(named: "Issue")?.status == .failed)
                #expect(try await library.downloadingAssets().isEmpty)
            }
        }
    }

    @Test func persistentServerErrorGivesUpAfterTheRetryBudget() async throws {
        try await withTestServer { server in
            server.serve("/err.bin", bytes: [1])
            server.setFaults("/err.bin", Faults(status: 500))
            try await withTemporaryDirectory { root in
                let (_, asset, _, _) = try await fetchOne(server, path: "/err.bin", root: root)
                #expect(asset.state == .failed)
                #expect(asset.error?.contains("500") == true)
                #expect(server.requestCount("/err.bin") == 4)
            }
        }
    }

    @Test func refusedConnectionsAreRetriedThenFailClearly() async throws {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root)
            // Nothing listens on port 1 of the loopback address.
            try await library.addIssue(
                named: "Issue", date: DownloadTests.date,
                assets: [AssetRequest(url: try #require(URL(string: "http://127.0.0.1:1/x.pdf")))])
            let events = EventLog()
            let summary = try await library.download { for await event in $0 { events.append(event) } }
            try await library.shutdown()
            let message = try #require(summary.failed.values.first)
            #expect(message.contains("connection refused"), "\(message)")
            #expect(message.contains("gave up after 4 attempts"), "\(message)")
            #expect(events.all.filter { if case .retrying = $0.kind { true } else { false } }.count == 3)
        }
    }

    @Test func checksumMismatchDeletesTheBadBytes() async throws {
        try await withTestServer { server in
            server.serve("/bad.bin", bytes: patternBytes(count: 50_000))
            try await withTemporaryDirectory { root in
                let (library, asset, _, _) = try await fetchOne(
                    server, path: "/bad.bin", root: root, sha256: String(repeating: "0", count: 64))
                #expect(asset.state == .failed)
                #expect(asset.error?.contains("SHA-256") == true)
                let issue = try #require(try await library.issue(named: "Issue"))
                // The content folder is made with the first file placed in it: none here.
                let content = try? FileManager.default.contentsOfDirectory(atPath: library.contentURL(for: issue).path)
                #expect(content?.isEmpty ?? true)
                #expect(library.bytesOnDisk(assetID: asset.id) == nil)
            }
        }
    }

    @Test func redirectsAreFollowedAndLoopsFail() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 20_000)
            server.serve("/real.bin", bytes: body)
            server.serve("/hop", bytes: [])
            server.setFaults("/hop", Faults(redirectTo: "/real.bin"))
            server.serve("/loop", bytes: [])
            server.setFaults("/loop", Faults(redirectTo: "/loop"))
            try await withTemporaryDirectory { root in
                let (library, asset, _, _) = try await fetchOne(server, path: "/hop", root: root)
                #expect(asset.state == .downloaded)
                #expect(try await contentFile(library, asset.fileName ?? "") == body)
            }
            try await withTemporaryDirectory { root in
                let (_, asset, _, _) = try await fetchOne(server, path: "/loop", root: root)
                #expect(asset.state == .failed)
                #expect(asset.error?.contains("redirect") == true)
            }
        }
    }

    @Test func completePartialFileAnswered416CountsAsDone() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 70_000, seed: 3)
            server.serve("/done.bin", bytes: body, etag: "\"e1\"")
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let url = try #require(URL(string: server.url("/done.bin")))
                let issue = try await library.addIssue(
                    named: "Issue", date: DownloadTests.date, assets: [AssetRequest(url: url)])
                let id = try #require(issue.assets.first?.id)
                // As if a crash hit after the last byte was written but before the file was moved.
                let downloads = root.appendingPathComponent(".downloads")
                try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
                try Data(body).write(to: downloads.appendingPathComponent("\(id).part"))
                try ResumeRecord(url: url.absoluteString, etag: "\"e1\"", expectedBytes: 70_000).save(
                    downloads.appendingPathComponent("\(id).resume.json").path)
                let summary = try await library.download()
                try await library.shutdown()
                #expect(summary.finished == [id])
                #expect(server.requests("/done.bin").first?.header("range") == "bytes=70000-")
                #expect(server.bodyBytesSent("/done.bin") == 0)
                #expect(try await contentFile(library, "done.bin") == body)
            }
        }
    }

    @Test func partialWithoutValidatorIsNeverAppendedTo() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 90_000, seed: 4)
            server.serve("/nv.bin", bytes: body)
            server.setFaults("/nv.bin", Faults(cutAfterBytes: 30_000, omitValidators: true))
            try await withTemporaryDirectory { root in
                let (library, asset, _, _) = try await fetchOne(
                    server, path: "/nv.bin", root: root, sha256: sha256Hex(body))
                #expect(asset.state == .downloaded)
                #expect(try await contentFile(library, "nv.bin") == body)
                #expect(server.requests("/nv.bin").last?.header("range") == nil)
            }
        }
    }

    @Test func namesComeFromContentDispositionAndNeverClash() async throws {
        try await withTestServer { server in
            server.serve("/dl?id=1", bytes: [1])
            server.serve("/x/a.bin", bytes: [2])
            server.serve("/y/a.bin", bytes: [3])
            server.serve("/evil", bytes: [4])
            server.setFaults("/evil", Faults(contentDisposition: "attachment; filename=\"../../escape.txt\""))
            server.serve("/nice", bytes: [5])
            server.setFaults("/nice", Faults(contentDisposition: "attachment; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf"))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let urls = try ["/x/a.bin", "/y/a.bin", "/evil", "/nice"].map {
                    try #require(URL(string: server.url($0)))
                }
                try await library.addIssue(
                    named: "Issue", date: DownloadTests.date, assets: urls.map { AssetRequest(url: $0) })
                try await library.download(options: DownloadOptions(jobs: 1))
                try await library.shutdown()
                let issue = try #require(await library.issue(named: "Issue"))
                let names = issue.assets.compactMap(\.fileName)
                // The two a.bin assets may be placed in either order (placing overlaps the next transfer):
                // one keeps the name, the other gets the suffix.
                #expect(Set(names.prefix(2)) == ["a.bin", "a (2).bin"])
                #expect(Array(names.dropFirst(2)) == ["escape.txt", "Résumé.pdf"])
                #expect(
                    !FileManager.default.fileExists(
                        atPath: root.deletingLastPathComponent().appendingPathComponent("escape.txt").path))
            }
        }
    }

    @Test(.slow) func oneSlowAssetDoesNotHoldTheOthersBack() async throws {
        try await withTestServer { server in
            // 15 s: longer than 49 small files take even on a loaded two-core machine.
            server.serve("/slow.bin", bytes: patternBytes(count: 1_500_000))
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 100_000))
            var requests = [AssetRequest]()
            requests.append(AssetRequest(url: try #require(URL(string: server.url("/slow.bin")))))
            for i in 0..<49 {
                server.serve("/f\(i).bin", bytes: patternBytes(count: 20_000, seed: UInt64(i + 1)))
                requests.append(AssetRequest(url: try #require(URL(string: server.url("/f\(i).bin")))))
            }
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                try await library.addIssue(named: "Issue", date: DownloadTests.date, assets: requests)
                let events = EventLog()
                let summary = try await library.download(options: DownloadOptions(jobs: 8)) {
                    for await event in $0 { events.append(event) }
                }
                try await library.shutdown()
                #expect(summary.finished.count == 50)
                let finishedOrder = events.all.compactMap {
                    if case .finished = $0.kind { $0.url.lastPathComponent } else { nil }
                }
                #expect(finishedOrder.last == "slow.bin")
                #expect(try await library.issue(named: "Issue")?.status == .available)
            }
        }
    }

    @Test func cancellingKeepsThePartialAndResumeFinishesIt() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 600_000, seed: 5)
            server.serve("/big.bin", bytes: body)
            server.setFaults("/big.bin", Faults(bytesPerSecond: 400_000))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let url = try #require(URL(string: server.url("/big.bin")))
                let issue = try await library.addIssue(
                    named: "Issue", date: DownloadTests.date, assets: [AssetRequest(url: url)])
                let id = try #require(issue.assets.first?.id)
                let run = Task { try await library.download() }
                try await waitUntil("50 kB on disk") { (library.bytesOnDisk(assetID: id) ?? 0) >= 50_000 }
                run.cancel()
                let summary = try await run.value
                #expect(summary.interrupted == [id])
                let onDisk = try #require(library.bytesOnDisk(assetID: id))
                #expect(onDisk > 0 && onDisk < body.count)
                #expect(try await library.downloadingAssets().map(\.id) == [id])
                #expect(try await library.issue(named: "Issue")?.status == .downloading)

                server.setFaults("/big.bin", Faults())
                let resumed = try await library.resumeDownloads()
                try await library.shutdown()
                #expect(resumed.finished == [id])
                #expect(try await contentFile(library, "big.bin") == body)
                #expect(server.bodyBytesSent("/big.bin") <= body.count + 256 * 1024)
            }
        }
    }

    @Test func cancelDownloadStopsOneAssetAndKeepsItForResume() async throws {
        try await withTestServer { server in
            let slow = patternBytes(count: 900_000, seed: 21)
            server.serve("/slow.bin", bytes: slow)
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 150_000))
            server.serve("/fast.bin", bytes: patternBytes(count: 40_000, seed: 22))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let issue = try await library.addIssue(
                    named: "Issue", date: DownloadTests.date,
                    assets: [
                        AssetRequest(url: try #require(URL(string: server.url("/slow.bin")))),
                        AssetRequest(url: try #require(URL(string: server.url("/fast.bin")))),
                    ])
                let slowID = issue.assets[0].id
                let run = Task { try await library.download(options: DownloadOptions(jobs: 2)) }
                try await waitUntil("30 kB of the slow asset on disk") {
                    (library.bytesOnDisk(assetID: slowID) ?? 0) >= 30_000
                }
                await library.cancelDownload(assetID: slowID)
                let summary = try await run.value
                #expect(summary.interrupted == [slowID])
                #expect(summary.finished == [issue.assets[1].id])
                #expect(try await library.downloadingAssets().map(\.id) == [slowID])
                #expect(server.bodyBytesSent("/slow.bin") < slow.count)
                server.setFaults("/slow.bin", Faults())
                let resumed = try await library.resumeDownloads()
                try await library.shutdown()
                #expect(resumed.finished == [slowID])
                #expect(try await contentFile(library, "slow.bin") == slow)
            }
        }
    }

    @Test func crashAfterPlacingAKeptArchiveIsFinishedWithoutRefetching() async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("k.zip").path
            try ArchiveFixtures.write([.file("page.html", Array("<p>".utf8))], format: .zip, to: zip)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: zip)))
            try await withTestServer { server in
                server.serve("/k.zip", bytes: bytes)
                try await withTemporaryDirectory { root in
                    let library = try await openLibrary(root)
                    let issue = try await library.addIssue(
                        named: "Issue", date: DownloadTests.date,
                        assets: [AssetRequest(url: try #require(URL(string: server.url("/k.zip"))))])
                    let id = try #require(issue.assets.first?.id)
                    try await library.download(options: DownloadOptions(keepArchives: true))
                    #expect(try await library.issue(named: "Issue")?.assets.first?.fileName == "k.zip")
                    // Rewind to the instant after the archive was merged and placed, before the commit.
                    try await library.commit { changes in
                        changes.markPending(id, issueNamed: "Issue")
                        return try changes.updateAsset(id, ofIssueNamed: "Issue") { $0.state = .downloaded }
                    }
                    var record = ResumeRecord(
                        url: server.url("/k.zip"), etag: "\"x\"", expectedBytes: Int64(bytes.count))
                    record.placedAs = "k.zip"
                    try record.save(root.appendingPathComponent(".downloads/\(id).resume.json").path)
                    let summary = try await library.resumeDownloads(options: DownloadOptions(keepArchives: true))
                    try await library.shutdown()
                    #expect(summary.finished == [id])
                    #expect(server.bodyBytesSent("/k.zip") == bytes.count)
                    let asset = try #require(await library.issue(named: "Issue")?.assets.first)
                    #expect(asset.state == .unpacked && asset.fileName == "k.zip")
                    // The sidecar (issue.json) is the library's own file beside the content.
                    let files = try FileManager.default.contentsOfDirectory(atPath: library.contentURL(for: issue).path)
                        .filter { !LibraryLayout.issueFiles.contains($0) }.sorted()
                    #expect(files == ["k.zip", "page.html"])
                }
            }
        }
    }

    @Test func eventsArriveAsAnAsyncSequence() async throws {
        try await withTestServer { server in
            server.serve("/s.bin", bytes: patternBytes(count: 5_000))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                try await library.addIssue(
                    named: "Issue", date: DownloadTests.date,
                    assets: [AssetRequest(url: try #require(URL(string: server.url("/s.bin"))))])
                var kinds: [String] = []
                try await library.download { events in
                    for await event in events {
                        switch event.kind {
                        case .started: kinds.append("started")
                        case .finished: kinds.append("finished")
                        default: break
                        }
                    }
                }
                try await library.shutdown()
                #expect(kinds == ["started", "finished"])
            }
        }
    }

    @Test func removeDuringDownloadCancelsAndDeletesEverything() async throws {
        try await withTestServer { server in
            server.serve("/r.bin", bytes: patternBytes(count: 800_000))
            server.setFaults("/r.bin", Faults(bytesPerSecond: 300_000))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root)
                let issue = try await library.addIssue(
                    named: "Issue", date: DownloadTests.date,
                    assets: [AssetRequest(url: try #require(URL(string: server.url("/r.bin"))))])
                let id = try #require(issue.assets.first?.id)
                let run = Task { try await library.download() }
                // The removal must meet a transfer that is really under way, not one not yet started.
                try await waitUntil("the download to be under way") { (library.bytesOnDisk(assetID: id) ?? 0) > 0 }
                try await library.removeIssue(named: "Issue")
                let summary = try await run.value
                #expect(summary.finished.isEmpty, "the removal came after the download had finished")
                #expect(server.bodyBytesSent("/r.bin") < 800_000)
                try await library.shutdown()
                #expect(try await library.issues().isEmpty)
                #expect(try await library.downloadingAssets().isEmpty)
                #expect(!FileManager.default.fileExists(atPath: library.contentURL(for: issue).path))
                let leftovers = try FileManager.default.contentsOfDirectory(
                    atPath: root.appendingPathComponent(".downloads").path)
                #expect(leftovers.allSatisfy(LibraryLayout.isSharedDownloadFile), "\(leftovers)")
            }
        }
    }
}

/// A one-shot switch.
final class Flag: Sendable {
    private let value = Mutex(false)
    func setOnce() -> Bool {
        value.withLock { old in
            defer { old = true }
            return !old
        }
    }
}
