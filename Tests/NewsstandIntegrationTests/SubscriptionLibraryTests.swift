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

/// Subscriptions through the `Library` API, as an app would use them: what the CLI does, plus the
/// scoped `sync` (leaving its closure early cancels what is left) and a crash between the catalog's
/// write and the subscription's (the next refresh adopts the issue instead of adding it twice).
@Suite(.timeLimit(.minutes(5))) struct SubscriptionLibraryTests {
    static func jsonFeed(_ count: Int, server: TestHTTPServer, title: String = "Notes") -> [UInt8] {
        let items = (1...max(1, count)).prefix(count).map { n in
            """
            {"id": "note-\(n)", "title": "Note \(n)", "date_published": "2026-11-\(String(format: "%02d", n))T08:00:00Z",
             "attachments": [{"url": "\(server.url("/notes/\(n).pdf"))", "mime_type": "application/pdf"}]}
            """
        }
        return Array(
            """
            {"version": "https://jsonfeed.org/version/1.1", "title": "\(title)", "items": [\(items.joined(separator: ","))]}
            """.utf8)
    }

    @Test func subscribeSyncAndChangeThroughTheAPI() async throws {
        try await withTestServer { server in
            for n in 1...3 { server.serve("/notes/\(n).pdf", bytes: patternBytes(count: 100 * n)) }
            server.serve("/feed.json", bytes: Self.jsonFeed(2, server: server))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let url = try #require(URL(string: server.url("/feed.json")))
                    let report = try await library.subscribe(to: url, options: SubscribeOptions(initial: .all))
                    #expect(report.subscription == "Notes")
                    #expect(Set(report.addedIssues) == ["Note 1", "Note 2"])
                    let issue = try #require(try await library.issue(named: "Note 2"))
                    #expect(issue.date == IssueDate("2026-11-02"))
                    #expect(issue.origin?.itemID == "note-2")

                    server.serve("/feed.json", bytes: Self.jsonFeed(3, server: server))
                    var seen: [SyncReport] = []
                    let reports = try await library.sync { reports in
                        for await report in reports { seen.append(report) }
                    }
                    #expect(seen.count == 1 && reports.count == 1)
                    #expect(reports.first?.addedIssues == ["Note 3"])

                    let changed = try await library.changeSubscription(
                        named: "notes", SubscriptionChange(name: "Field Notes", keep: .some(2), isPaused: true))
                    #expect(changed.name == "Field Notes" && changed.keep == 2 && changed.isPaused)
                    // Paused: a sync of all skips it; naming it refreshes it.
                    #expect(try await library.sync().isEmpty)
                    #expect(try await library.sync(["Field Notes"]).count == 1)
                    await #expect(throws: NewsstandError.self) { try await library.sync(["Nope"]) }
                    let subscriptions = try await library.subscriptions()
                    #expect(subscriptions.map(\.itemsSeen) == [3])
                }
            }
        }
    }

    /// A feed trickled fast enough to pass the stall limit but too slowly to ever finish: the feed deadline
    /// ends the fetch, the subscription fails for this round with a message saying so, and `sync` returns.
    @Test func aFeedTooSlowToFinishMeetsTheDeadline() async throws {
        try await withTestServer { server in
            server.serve("/notes/1.pdf", bytes: patternBytes(count: 100))
            server.serve("/feed.json", bytes: Self.jsonFeed(1, server: server))
            try await withTemporaryDirectory { root in
                var configuration = Library.Configuration()
                configuration.feedDeadline = .seconds(2)
                try await Library.withLibrary(at: root, configuration: configuration) { library in
                    let url = try #require(URL(string: server.url("/feed.json")))
                    _ = try await library.subscribe(to: url, options: SubscribeOptions(downloadsAutomatically: false))
                    // 100 KB at 500 bytes a second: 200 s, far above the stall limit's 1 KiB a minute.
                    let padding = String(repeating: " ", count: 100_000)
                    server.serve("/feed.json", bytes: Self.jsonFeed(1, server: server) + Array(padding.utf8))
                    server.setFaults("/feed.json", Faults(bytesPerSecond: 500))
                    let started = ContinuousClock.now
                    let reports = try await library.sync()
                    // About 2 s alone; room for a loaded machine whose cooperative pool other tests hold.
                    #expect(ContinuousClock.now - started < .seconds(60))
                    guard case .failed(let error) = try #require(reports.first).outcome else {
                        Issue.record("the sync did not fail: \(reports)")
                        return
                    }
                    #expect(error.description.contains("no complete answer within"), "\(error)")
                }
            }
        }
    }

    @Test func leavingTheSyncClosureEarlyCancelsTheRest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    for n in 1...6 {
                        server.serve("/feed-\(n).json", bytes: Self.jsonFeed(0, server: server, title: "Feed \(n)"))
                        let url = try #require(URL(string: server.url("/feed-\(n).json")))
                        try await library.subscribe(to: url, options: SubscribeOptions(initial: .newest(0)))
                    }
                    // Every feed now answers slowly; the closure leaves after the first report.
                    server.setDefaultFaults(Faults(bytesPerSecond: 20))
                    for n in 1...6 {
                        server.serve("/feed-\(n).json", bytes: Self.jsonFeed(0, server: server, title: "Feed \(n) v2"))
                    }
                    let started = ContinuousClock.now
                    let reports = try await library.sync(concurrency: 1) { reports in
                        for await _ in reports { break }
                    }
                    #expect(reports.count <= 2, "\(reports.count) refreshes ran after the closure left")
                    #expect(ContinuousClock.now - started < .seconds(30))
                }
            }
        }
    }

    /// A writer killed between writing a temporary and renaming it (the CI run of stop 38 caught the service
    /// so): the next `sync` deletes the record's temporary, and the status's once its writer's PID is gone; a
    /// status temporary whose PID is alive may be a live writer's and stays.
    @Test func syncDeletesTheTemporariesOfKilledWriters() async throws {
        try await withTestServer { server in
            server.serve("/feed.json", bytes: Self.jsonFeed(1, server: server))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let url = try #require(URL(string: server.url("/feed.json")))
                    try await library.subscribe(to: url, options: SubscribeOptions(initial: .newest(0)))
                    let layout = LibraryLayout(root: root.path)
                    let id = try #require(try await library.subscription(named: "Notes")).id
                    let dead = try deadPID()
                    let record = LibraryLayout.temporary(beside: layout.subscription(id))
                    let deadStatus = "\(layout.syncStatus)/.\(id).json.tmp-\(dead)-7"
                    let liveStatus = "\(layout.syncStatus)/.\(id).json.tmp-\(getpid())-8"
                    for path in [record, deadStatus, liveStatus] {
                        #expect(FileManager.default.createFile(atPath: path, contents: Data("{\"torn".utf8)))
                    }
                    #expect(try await library.verify().problems.count == 3)
                    _ = try await library.sync()
                    #expect(!FileManager.default.fileExists(atPath: record))
                    #expect(!FileManager.default.fileExists(atPath: deadStatus))
                    #expect(FileManager.default.fileExists(atPath: liveStatus))
                    try FileManager.default.removeItem(atPath: liveStatus)
                    #expect(try await library.verify().problems.isEmpty)
                }
            }
        }
    }

    /// The PID of a process that has exited and been reaped.
    private func deadPID() throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test func anIssueMadeBeforeACrashIsAdoptedNotAddedAgain() async throws {
        try await withTestServer { server in
            server.serve("/feed.json", bytes: Self.jsonFeed(1, server: server))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root) { library in
                    let url = try #require(URL(string: server.url("/feed.json")))
                    try await library.subscribe(to: url, options: SubscribeOptions(initial: .all, downloadsAutomatically: false))
                    // What a sync killed between its two writes leaves: the issue of note 2 in the catalog,
                    // its item not yet in the subscription's record.
                    let subscription = try #require(try await library.subscriptions().first)
                    let feedItem = FeedItem(
                        id: "note-2", title: "Note 2", date: nil,
                        assets: [FeedAsset(url: try #require(URL(string: server.url("/notes/2.pdf"))))])
                    let item = SubscriptionItem(id: "note-2", firstSeen: IssueDate("2026-11-02")!)
                    let catalog = library.catalog
                    _ = try catalog.write { changes in
                        try Library.stageSubscribedIssue(feedItem, item: item, subscription: subscription, in: &changes)
                    }
                    server.serve("/feed.json", bytes: Self.jsonFeed(2, server: server))
                    let reports = try await library.sync()
                    #expect(reports.first?.addedIssues == ["Note 2"])
                    let names = try await library.issues().map(\.name).sorted()
                    #expect(names == ["Note 1", "Note 2"])
                    #expect(try await library.subscriptions().first?.issueNames.sorted() == ["Note 1", "Note 2"])
                }
            }
        }
    }
}
