import Foundation
import NewsstandTestSupport
import Testing

@testable import NewsstandCatalog
@testable import NewsstandCore

/// The event log stays bounded without losing what a hook still needs: compaction by count and by age keeps
/// every event after the slowest hook's position and the last one, and cursors go on from where they were.
@Suite(.timeLimit(.minutes(2))) struct EventLogTests {
    func catalog(_ root: URL, count: Int, age: TimeInterval = 30 * 86_400) throws -> Catalog {
        // Looked at on every event, so each rule is seen at once.
        let catalog = Catalog(
            layout: LibraryLayout(root: root.path), durable: false, eventLogCount: count, eventLogAge: age,
            eventLogCheckInterval: 1)
        try catalog.prepare(create: true)
        return catalog
    }

    func announce(_ catalog: Catalog, _ n: Int) throws {
        for i in 0..<n {
            try catalog.announce([CatalogEvent(kind: .libraryLowSpace, detail: "event \(i)")])
        }
    }

    @Test func compactionKeepsTheLastCountAndCursorsGoOn() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root, count: 5)
            try announce(catalog, 20)
            let kept = try catalog.readEvents(after: 0)
            #expect(kept.map(\.cursor) == Array(16...20))
            try announce(catalog, 1)
            #expect(try catalog.lastEventCursor() == 21)
            #expect(try catalog.readEvents(after: 0).first?.cursor == 17)
        }
    }

    @Test func anEventAHookHasNotAcknowledgedIsNeverCompactedAway() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root, count: 3)
            try announce(catalog, 4)
            // A hook that has acknowledged up to cursor 2 and then stopped (down, backing off).
            let layout = LibraryLayout(root: root.path)
            try FileManager.default.createDirectory(atPath: layout.hookPositions, withIntermediateDirectories: true)
            try HookPosition(cursor: 2).write(layout.hookPosition("slow"))
            try announce(catalog, 30)
            let kept = try catalog.readEvents(after: 0).map(\.cursor)
            #expect(kept == Array(3...34), "everything after the slow hook's position stays")
            // Once it catches up, the next compaction drops what it has taken.
            try HookPosition(cursor: 34).write(layout.hookPosition("slow"))
            try announce(catalog, 1)
            #expect(try catalog.readEvents(after: 0).map(\.cursor) == [33, 34, 35])
        }
    }

    @Test func eventsOlderThanTheAgeGoEvenUnderTheCount() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root, count: 1000, age: 3600)
            for i in 0..<5 {
                try catalog.announce([CatalogEvent(kind: .libraryLowSpace, detail: "old \(i)", time: Date().addingTimeInterval(-7200))])
            }
            try announce(catalog, 2)
            let kept = try catalog.readEvents(after: 0)
            #expect(kept.map(\.cursor) == [6, 7])
            #expect(kept.allSatisfy { $0.detail?.hasPrefix("event") == true })
        }
    }
}
