import Crypto
import Foundation
import GRDB
import Logging
import NewsstandCore
import Synchronization

/// The catalog: the issues' JSON records, the saved list of pending downloads and the event log, in one SQLite
/// database (`.catalog/catalog.sqlite`, ``CatalogDatabase``). The only way into it: nothing else opens it.
///
/// Reads are snapshots (WAL: never blocked by a writer). A change goes through ``write(_:)``: it holds the
/// library's file lock (which also orders the file moves some changes make), stages its changes in
/// ``CatalogChanges``, and commits them with the events they report in one transaction, so an event is
/// recorded exactly when its change is, and a `kill -9` anywhere leaves the last committed state. A commit of a
/// durable catalog is on disk (`synchronous = FULL`) before ``write(_:)`` returns.
/// Blocking: call off the concurrency pool.
package final class Catalog: Sendable {
    /// The version written into `library.json`. Version 4 keeps the catalog in SQLite; versions 1 to 3 kept it
    /// in JSON files, and are upgraded when this version first opens them (``CatalogUpgrade``). An older
    /// `issues` refuses version 4 as a newer version's.
    static let version: Int64 = 4

    package let layout: LibraryLayout
    /// Whether each change is flushed to stable storage before it counts as done.
    let durable: Bool
    /// Where a failure after a committed change is told, as a warning: the change stands.
    let logger: Logger?
    /// The event log keeps the events of the last `eventLogAge` seconds among the last `eventLogCount` (and
    /// every event a hook has not acknowledged).
    let eventLogCount: Int
    let eventLogAge: TimeInterval
    /// How many cursors apart the log is looked at for events to drop (the hooks' files are read then).
    let eventLogCheckInterval: Int64
    /// Called after a change that recorded events has committed (to wake this process's hook delivery).
    let onEvents: (@Sendable () -> Void)?
    /// Called after each committed change with the issues whose records it changed (not the deleted ones):
    /// the library rewrites their sidecars (`issue.json`) from here, so every change of an issue reaches it.
    let onIssuesChanged: (@Sendable ([Issue]) -> Void)?
    /// The open database, opened by ``prepare(create:)`` or the first use.
    private let opened = Mutex<(any DatabaseWriter)?>(nil)
    /// Whether this value committed a change (only then does ``close()`` close the database: closing the last
    /// connection checkpoints, which rewrites the files, and a command that changed nothing writes nothing).
    private let wrote = Mutex(false)

    package init(
        layout: LibraryLayout, durable: Bool = true, logger: Logger? = nil, eventLogCount: Int = 10_000,
        eventLogAge: TimeInterval = 30 * 86_400, eventLogCheckInterval: Int = 256, onEvents: (@Sendable () -> Void)? = nil,
        onIssuesChanged: (@Sendable ([Issue]) -> Void)? = nil
    ) {
        self.logger = logger
        self.layout = layout
        self.durable = durable
        self.eventLogCount = eventLogCount
        self.eventLogAge = eventLogAge
        self.eventLogCheckInterval = Int64(max(1, eventLogCheckInterval))
        self.onEvents = onEvents
        self.onIssuesChanged = onIssuesChanged
    }

    /// The key under which a folder name is claimed: case-folded, so that two issues never get folders
    /// that one case-insensitive disk (a backup drive) would merge.
    package static func folderKey(_ folderName: String) -> String {
        key(for: folderName.lowercased())
    }

    /// The record key of an issue name: the first 128 bits of SHA-256 of its NFC form, in hex. Swift
    /// compares names by canonical equivalence, so both spellings of "é" must find the same record.
    package static func key(for name: String) -> String {
        let digest = SHA256.hash(data: Array(IssueName.canonical(name).utf8))
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in digest.prefix(16) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: - The database

    /// The database, opened on first use (a library that is not version 4 yet is prepared first).
    func database() throws -> any DatabaseWriter {
        if let writer = opened.withLock({ $0 }) { return writer }
        if case .current = try readMarker() {} else { try prepare(create: false) }
        return try openDatabase(create: false)
    }

    /// Opens the database file (once per catalog value).
    func openDatabase(create: Bool) throws -> any DatabaseWriter {
        try opened.withLock { opened in
            if let opened { return opened }
            let writer = try CatalogDatabase.open(path: layout.database, durable: durable, create: create)
            opened = writer
            return writer
        }
    }

    /// Closes the database when this value committed a change (a later use opens it again). The last connection of
    /// all processes to close checkpoints
    /// the WAL into the database and deletes it: otherwise the next process to open the catalog first reads the
    /// whole WAL back (with 30 MB of WAL after an import, every `show` read 7,264 pages before its one row).
    package func close() {
        guard wrote.withLock({ $0 }) else { return }
        let writer = opened.withLock { opened in
            defer { opened = nil }
            return opened
        }
        do {
            // A WAL grown past 4 MiB (an import, a large sync) is copied back and emptied now rather than left for
            // the next process to read back.
            if let writer, let size = POSIX.fileSize(layout.database + "-wal"), size > 4 << 20 {
                try writer.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            }
            try writer?.close()
        } catch {
            logger?.debug("closing the catalog: \(error)")
        }
    }

    /// Runs `body` in a read transaction: one snapshot of the catalog, whatever commits meanwhile.
    package func read<T>(_ body: (Database) throws -> T) throws -> T {
        let writer = try database()
        do {
            return try writer.read(body)
        } catch {
            throw CatalogDatabase.translate(error, path: layout.database)
        }
    }

    /// Runs `body` in one IMMEDIATE write transaction, committed when it returns (rolled back when it throws),
    /// after the crash-safe file replacements a killed process left are finished (``finishFileIntents(_:)``).
    func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        let writer = try database()
        do {
            return try writer.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    try finishFileIntents(db)
                    let changesBefore = db.totalChangesCount
                    result = try body(db)
                    CrashPoint.reached("catalog-transaction")
                    if db.totalChangesCount != changesBefore { wrote.withLock { $0 = true } }
                    return .commit
                }
                guard let result else { throw CatalogShapeError("the transaction returned nothing") }
                return result
            }
        } catch {
            throw CatalogDatabase.translate(error, path: layout.database)
        }
    }

    // MARK: - Reading

    /// The issue with exactly this name, or nil.
    /// - Throws: `.manifestUnreadable` naming a damaged record.
    package func issue(named name: String) throws -> Issue? {
        guard let issue = try record(key: Catalog.key(for: name)) else { return nil }
        return issue.name == name ? issue : nil
    }

    /// Where the asset with `id` of the named issue stands, or nil when the issue or the asset is gone;
    /// reads that one asset of the record, not all of them.
    package func assetStanding(_ id: String, ofIssueNamed name: String) throws -> AssetStanding? {
        let key = Catalog.key(for: name)
        return try read { db in
            try CatalogRows.withRecord(key: key, db) { bytes in
                try IssueRecord.decodeAsset(id, ofIssueNamed: name, in: bytes, path: recordPath(key))
            } ?? nil
        }
    }

    /// The record stored under `key`, or nil.
    package func record(key: String) throws -> Issue? {
        try read { db in try CatalogRows.issue(key: key, db, path: recordPath(key)) }
    }

    /// How a record is named in errors: the database and the issue's key.
    package func recordPath(_ key: String) -> String { "\(layout.database) (issue \(key))" }

    /// The commit counter: changes with every committed change (the shelf keeps its view while it stays).
    package func generation() throws -> Int64 {
        try read { db in try CatalogRows.generation(db) }
    }

    // MARK: - Writing

    /// Runs `body` holding the library's file lock.
    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: layout.lockFile)
        defer { withExtendedLifetime(lock) {} }
        return try body()
    }

    /// Applies the changes `body` stages, under the lock, in one transaction. If `body` throws, nothing is
    /// written.
    package func write<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        try withLock { try writeHoldingLock(body) }
    }

    /// ``write(_:)`` for a caller that already holds the lock (``withLock(_:)``).
    package func writeHoldingLock<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        let (result, committed) = try transaction { db -> (T, Committed) in
            var changes = CatalogChanges(catalog: self, db: db)
            let result = try body(&changes)
            return (result, try commit(changes, db))
        }
        CrashPoint.reached("catalog-committed")
        afterCommit(committed)
        return result
    }

    /// What a committed change tells others: whether it recorded events, and the issues it changed.
    struct Committed {
        var recordedEvents = false
        var changed: [Issue] = []
    }

    /// Writes the staged rows, the saved list's entries and the events the change reports, inside the
    /// transaction.
    private func commit(_ changes: CatalogChanges, _ db: Database) throws -> Committed {
        let keys = changes.changedKeys
        guard !keys.isEmpty || !changes.pendingAdded.isEmpty || !changes.pendingRemoved.isEmpty else {
            return Committed()
        }
        for key in keys {
            if case .some(let issue)? = changes.staged[key] {
                try CatalogRows.put(issue, key: key, db)
            } else {
                try CatalogRows.delete(key: key, db)
            }
        }
        for id in changes.pendingRemoved.sorted() { try CatalogRows.clearPending(id, db) }
        for (id, key) in changes.pendingAdded.sorted(by: { $0.key < $1.key }) { try CatalogRows.markPending(id, key: key, db) }
        let events = derivedEvents(changes, keys: keys)
        try record(events, db)
        try CatalogRows.bumpGeneration(db)
        return Committed(recordedEvents: !events.isEmpty, changed: keys.compactMap { changes.staged[$0] ?? nil })
    }

    /// Tells this process what a commit changed (after it, so a hook or a sidecar never runs ahead of it).
    func afterCommit(_ committed: Committed) {
        if committed.recordedEvents { onEvents?() }
        if let onIssuesChanged, !committed.changed.isEmpty { onIssuesChanged(committed.changed) }
    }
}
