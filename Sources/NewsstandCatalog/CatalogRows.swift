import Foundation
import GRDB
import NewsstandCore

/// The catalog's SQL, in one place: every statement that reads or writes a row of the catalog's tables.
/// Statements are cached per connection (an import puts 100,000 rows through one prepared statement).
enum CatalogRows {
    // MARK: - Issues

    /// Inserts or replaces the row of `issue`: its record and the columns derived from it.
    static func put(_ issue: Issue, key: String, _ db: Database) throws {
        let summary = IssueSummary(issue)
        let date = issue.date
        let record = String(decoding: IssueRecord.encode(issue).dropLast(), as: UTF8.self)  // without its newline
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO issues (key, name, day, status, assets_done, assets_total, bytes, folder, folder_key,
                    pinned, removing, publication, subscription, record)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET name = excluded.name, day = excluded.day, status = excluded.status,
                    assets_done = excluded.assets_done, assets_total = excluded.assets_total, bytes = excluded.bytes,
                    folder = excluded.folder, folder_key = excluded.folder_key, pinned = excluded.pinned,
                    removing = excluded.removing, publication = excluded.publication,
                    subscription = excluded.subscription, record = excluded.record
                """)
        try statement.execute(arguments: [
            key, issue.name, date.year * 10_000 + date.month * 100 + date.day, summary.status.rawValue,
            summary.assetsDone, summary.assetsTotal, summary.bytes, issue.folderName,
            Catalog.folderKey(issue.claimName), issue.isPinned, issue.isBeingRemoved, issue.publicationName,
            issue.origin?.subscriptionID, record,
        ])
    }

    static func delete(key: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM issues WHERE key = ?").execute(arguments: [key])
        try db.cachedStatement(sql: "DELETE FROM pending WHERE issue_key = ?").execute(arguments: [key])
    }

    /// Calls `body` with the record's UTF-8 bytes under `key`, or returns nil when there is none.
    static func withRecord<T>(key: String, _ db: Database, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T? {
        let statement = try db.cachedStatement(sql: "SELECT record FROM issues WHERE key = ?")
        let rows = try Row.fetchCursor(statement, arguments: [key])
        guard let row = try rows.next() else { return nil }
        return try row.withUnsafeData(atIndex: 0) { data in
            try (data ?? Data()).withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
        }
    }

    /// The issue stored under `key`, or nil.
    static func issue(key: String, _ db: Database, path: String) throws -> Issue? {
        try withRecord(key: key, db) { try IssueRecord.decode($0, path: path) }
    }

    /// The key of the issue that claims the folder key, or nil.
    static func folderOwners(_ folderKey: String, _ db: Database) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT key FROM issues WHERE folder_key = ?"), arguments: [folderKey])
    }

    /// Calls `body` with each issue's key and record bytes, newest first then by name (the shelf's order),
    /// with `status` when given, leaving out issues being removed when `live`.
    static func forEachRecord(
        status: Issue.Status? = nil, live: Bool = false, _ db: Database,
        _ body: (_ key: String, _ record: UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let status {
            conditions.append("status = ?")
            arguments += [status.rawValue]
        }
        if live { conditions.append("removing = 0") }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let rows = try Row.fetchCursor(
            db, sql: "SELECT key, record FROM issues \(filter) ORDER BY day DESC, name", arguments: arguments)
        while let row = try rows.next() {
            let key: String = row[0]
            try row.withUnsafeData(atIndex: 1) { data in
                try (data ?? Data()).withUnsafeBytes { try body(key, $0.bindMemory(to: UInt8.self)) }
            }
        }
    }

    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM issues") ?? 0
    }

    // MARK: - The saved list of pending downloads

    static func markPending(_ assetID: String, key: String, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO pending (asset_id, issue_key) VALUES (?, ?)")
            .execute(arguments: [assetID, key])
    }

    static func clearPending(_ assetID: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM pending WHERE asset_id = ?").execute(arguments: [assetID])
    }

    /// The saved list: each asset with its issue's key, by asset id.
    static func pending(_ db: Database) throws -> [(id: String, key: String)] {
        try Row.fetchAll(db, sql: "SELECT asset_id, issue_key FROM pending ORDER BY asset_id").map { ($0[0], $0[1]) }
    }

    // MARK: - Events

    /// Records `events` (numbered here, after the log's last cursor).
    static func insertEvents(_ events: inout [CatalogEvent], _ db: Database) throws {
        guard !events.isEmpty else { return }
        var cursor = try lastEventCursor(db)
        let statement = try db.cachedStatement(sql: "INSERT INTO events (cursor, time, event) VALUES (?, ?, ?)")
        for index in events.indices {
            cursor += 1
            events[index].cursor = cursor
            let line = String(decoding: events[index].encoded().dropLast(), as: UTF8.self)
            try statement.execute(arguments: [cursor, events[index].time.timeIntervalSince1970, line])
        }
    }

    /// The last cursor ever given (kept by SQLite's sequence when older events are deleted), or 0.
    static func lastEventCursor(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'events'")) ?? 0
    }

    /// Up to `limit` events after `cursor`, in order.
    static func events(after cursor: Int64, limit: Int, _ db: Database, path: String) throws -> [CatalogEvent] {
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT event FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?"),
            arguments: [cursor, limit])
        var events: [CatalogEvent] = []
        while let row = try rows.next() {
            events.append(
                try row.withUnsafeData(atIndex: 0) { data in
                    try (data ?? Data()).withUnsafeBytes { try CatalogEvent.decode($0.bindMemory(to: UInt8.self), path: path) }
                })
        }
        return events
    }

    // MARK: - Meta

    static func generation(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'generation'")) ?? 0
    }

    static func bumpGeneration(_ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE meta SET value = value + 1 WHERE key = 'generation'").execute()
    }
}
