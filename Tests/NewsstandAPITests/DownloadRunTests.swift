import Foundation
import NIOPosix
import Newsstand
import NewsstandTestSupport
import Testing

/// One shape for downloads: a run that lasts while its body reads the events.
@Suite(.timeLimit(.minutes(5))) struct DownloadRunTests {
    @Test func breakingOutStopsTheRunAndAResumeRightAfterContinuesIt() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 2_000_000)
            server.serve("/slow.bin", bytes: body)
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 200_000))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/slow.bin"))])
                    var brokeOut: ContinuousClock.Instant?
                    let first = try await library.download { events in
                        for await event in events {
                            if case .progress = event.kind {
                                brokeOut = ContinuousClock.now
                                break
                            }
                        }
                    }
                    #expect(ContinuousClock.now - (try #require(brokeOut)) < .seconds(5), "stopped at the break")
                    #expect(first.interrupted.count == 1)
                    #expect(first.finished.isEmpty)

                    // Same process, same library, straight away: no "another issues process is downloading it".
                    server.setFaults("/slow.bin", .none)
                    let kinds = EventLog()
                    let second = try await library.resumeDownloads { events in
                        for await event in events { kinds.append(event) }
                    }
                    #expect(second.finished.count == 1)
                    #expect(second.skipped.isEmpty)
                    #expect(!kinds.all.contains { if case .skipped = $0.kind { true } else { false } })
                    let resumedFrom = kinds.all.compactMap {
                        if case .started(let from, _) = $0.kind { from } else { nil }
                    }
                    #expect(resumedFrom.first.map { $0 > 0 } == true, "bytes already on disk are kept")
                    let asset = try #require(try await library.issue(named: "A")?.assets.first)
                    let file = try #require(asset.fileURL)
                    #expect(FileManager.default.contents(atPath: file.path) == Data(body))
                }
            }
        }
    }

    @Test func cancellingTheConsumerStopsTheRunAtOnce() async throws {
        try await withTestServer { server in
            server.serve("/slow.bin", bytes: patternBytes(count: 2_000_000))
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 200_000))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/slow.bin"))])
                    let progressed = Signal()
                    let task = Task {
                        try await library.download { events in
                            for await event in events {
                                if case .progress = event.kind { progressed.fire() }
                            }
                        }
                    }
                    await progressed.wait()
                    let cancelled = ContinuousClock.now
                    task.cancel()
                    let summary = try await task.value
                    #expect(ContinuousClock.now - cancelled < .seconds(5))
                    #expect(summary.interrupted.count == 1)
                    #expect(try await library.downloadingAssets().count == 1, "kept for a later resume")
                }
            }
        }
    }

    @Test func eventsReachTheBodyOffTheEventLoopsAndEndWithFullProgress() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 300_000)
            server.serve("/papers/report.pdf", bytes: body)
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date,
                        assets: [AssetRequest(url: try API.url(server, "/papers/report.pdf"))])
                    var events: [DownloadEvent] = []
                    var onEventLoop = false
                    let summary = try await library.download { stream in
                        for await event in stream {
                            if MultiThreadedEventLoopGroup.currentEventLoop != nil { onEventLoop = true }
                            events.append(event)
                        }
                    }
                    #expect(!onEventLoop)
                    #expect(summary.finished.count == 1)
                    // The last progress event of a completed transfer is at 100 %.
                    let progress = events.compactMap {
                        if case .progress(let received, let expected, _) = $0.kind { (received, expected) } else { nil }
                    }
                    let last = try #require(progress.last)
                    #expect(last.0 == 300_000 && last.1 == 300_000)

                    // The finished event and the catalog both say where the file is.
                    let finished = try #require(
                        events.compactMap { if case .finished(let asset) = $0.kind { asset } else { nil } }.first)
                    let issue = try #require(try await library.issue(named: "A"))
                    let expected = library.contentURL(for: issue).appendingPathComponent("report.pdf")
                    #expect(finished.fileURL?.path == expected.path)
                    #expect(issue.assets.first?.fileURL?.path == expected.path)
                    #expect(FileManager.default.contents(atPath: expected.path) == Data(body))
                }
            }
        }
    }

    @Test func anUnpackedArchiveIsLocatedAtTheContentFolder() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { root in
                let zip = root.appendingPathComponent("pages.zip").path
                try ArchiveFixtures.write([.file("page.html", Array("<p>".utf8))], format: .zip, to: zip)
                server.serve("/pages.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                let libraryRoot = root.appendingPathComponent("library")
                try await Library.withLibrary(at: libraryRoot, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/pages.zip"))])
                    try await library.download()
                    let issue = try #require(try await library.issue(named: "A"))
                    let asset = try #require(issue.assets.first)
                    #expect(asset.state == .unpacked)
                    #expect(asset.fileURL?.path == library.contentURL(for: issue).path)
                    #expect(FileManager.default.fileExists(atPath: library.contentURL(for: issue).path + "/page.html"))
                }
            }
        }
    }

    @Test func anUnknownIssueIsThrownBeforeTheBodyRuns() async throws {
        try await withTemporaryDirectory { root in
            try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                var ran = false
                await #expect {
                    try await library.download(issues: ["nope"]) { _ in ran = true }
                } throws: { ($0 as? NewsstandError)?.code == .issueNotFound }
                #expect(!ran)
            }
        }
    }
}
