import Crypto
import Foundation
import GRDB
import NewsstandCore

/// The event log: the `events` table, written in the same transaction as the change it reports, so an event is
/// recorded if and only if its change is. Cursors come from SQLite's `AUTOINCREMENT` sequence: strictly
/// increasing, never reused after older events are deleted.
extension Catalog {
    /// What the records staged in `changes` report: an issue added, made available, failed or removed.
    /// Derived from the records themselves, so no caller can make a change and forget its event.
    func derivedEvents(_ changes: CatalogChanges, keys: [String]) -> [CatalogEvent] {
        var events: [CatalogEvent] = []
        let now = Date()
        for key in keys {
            let before = changes.originalIssue(key)
            let after = changes.staged[key] ?? nil
            switch (before, after) {
            case (nil, .some(let issue)):
                events.append(CatalogEvent(kind: .issueAdded, issue: issue, time: now))
                if issue.status == .available { events.append(CatalogEvent(kind: .issueAvailable, issue: issue, time: now)) }
            case (.some(let old), nil):
                events.append(CatalogEvent(kind: .issueRemoved, issue: old, reason: changes.removalReason, time: now))
            case (.some(let old), .some(let new)):
                if new.status == .available && old.status != .available {
                    events.append(CatalogEvent(kind: .issueAvailable, issue: new, time: now))
                }
                if new.status == .failed && old.status != .failed {
                    events.append(CatalogEvent(kind: .issueFailed, issue: new, time: now))
                }
            case (nil, nil):
                break
            }
        }
        return events
    }

    /// Records `events` in the transaction, and keeps the log bounded: an event goes once it is older than
    /// `eventLogAge` or not among the last `eventLogCount`, and every hook has acknowledged it; the last always stays.
    func record(_ events: [CatalogEvent], _ db: Database) throws {
        guard !events.isEmpty else { return }
        var events = events
        let before = try CatalogRows.lastEventCursor(db)
        try CatalogRows.insertEvents(&events, db)
        let last = before + Int64(events.count)
        // Looked at once every `eventLogCheckInterval` cursors: the hooks' files are read then, not on every change.
        guard before / eventLogCheckInterval != last / eventLogCheckInterval else { return }
        let acknowledged = try hookPositions().min() ?? .max
        try db.execute(
            sql: "DELETE FROM events WHERE cursor < ? AND cursor <= ? AND (cursor <= ? OR time < ?)",
            arguments: [
                last, acknowledged, last - Int64(eventLogCount), Date().addingTimeInterval(-eventLogAge).timeIntervalSince1970,
            ])
    }

    /// The cursor of the log's last event, or 0 when there has been none.
    package func lastEventCursor() throws -> Int64 {
        try read { db in try CatalogRows.lastEventCursor(db) }
    }

    /// Up to `limit` events after `cursor`, in order.
    /// - Throws: `.manifestUnreadable` naming the database when a stored event cannot be read.
    package func readEvents(after cursor: Int64, limit: Int = 1_000) throws -> [CatalogEvent] {
        try read { db in try CatalogRows.events(after: cursor, limit: limit, db, path: "\(layout.database) (events)") }
    }

    /// Records events that report no change of the catalog (low free space).
    package func announce(_ events: [CatalogEvent]) throws {
        try withLock { try transaction { db in try record(events, db) } }
        onEvents?()
    }

    // MARK: - Files replaced with their events

    /// Replaces a file of the library (a subscription's record) atomically and durably, announcing `events`
    /// in the same crash-safe step: the events are recorded if and only if the file holds `data`. The events
    /// and the file's digest are committed first (a file intent); the file is written; a second transaction
    /// records the events and drops the intent. A kill between them leaves the intent, which the next
    /// transaction finishes (``finishFileIntents(_:)``). Called holding the lock (``withLock(_:)``).
    package func replaceFile(_ path: String, with data: Data, announcing events: [CatalogEvent]) throws {
        guard !events.isEmpty, path.hasPrefix(layout.root + "/") else {
            try AtomicFile.write(data, to: path)
            return
        }
        let relative = String(path.dropFirst(layout.root.count + 1))
        var lines: [UInt8] = []
        for event in events { lines += event.encoded() }
        try transaction { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO file_intents (path, digest, events) VALUES (?, ?, ?)",
                arguments: [relative, Catalog.digest(data), String(decoding: lines, as: UTF8.self)])
        }
        CrashPoint.reached("catalog-intent")
        try AtomicFile.write(data, to: path)
        CrashPoint.reached("catalog-file-written")
        try transaction { _ in }  // finishes the intent
        onEvents?()
    }

    /// Finishes the file intents a transaction finds: records the events of each whose file holds the bytes it
    /// names, and drops them all. Runs at the start of every write transaction.
    func finishFileIntents(_ db: Database) throws {
        let intents = try Row.fetchAll(db.cachedStatement(sql: "SELECT path, digest, events FROM file_intents"))
        guard !intents.isEmpty else { return }
        for intent in intents {
            let relative: String = intent[0]
            let digest: String = intent[1]
            let text: String = intent[2]
            guard !relative.split(separator: "/").contains(".."),
                let data = try AtomicFile.read(layout.root + "/" + relative), Catalog.digest(data) == digest
            else { continue }
            var events: [CatalogEvent] = []
            for line in text.split(separator: "\n") {
                events.append(
                    try Array(line.utf8).withUnsafeBufferPointer {
                        try CatalogEvent.decode($0, path: "\(layout.database) (file_intents)")
                    })
            }
            try record(events, db)
        }
        try db.execute(sql: "DELETE FROM file_intents")
    }

    /// Finishes what a killed process left (a file replaced without its events recorded), if anything.
    package func recoverIfNeeded() throws {
        let waiting = try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM file_intents") ?? 0 }
        if waiting > 0 {
            try withLock { try transaction { _ in } }
            onEvents?()
        }
    }

    static func digest(_ bytes: some DataProtocol) -> String {
        FileDigest.hex(SHA256.hash(data: bytes))
    }

    /// Every hook's last acknowledged cursor (``LibraryLayout/hookPosition(_:)``).
    package func hookPositions() throws -> [Int64] {
        let folder = layout.hookPositions
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return try names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap { name in
            try HookPosition.read(folder + "/" + name)?.cursor
        }
    }
}
