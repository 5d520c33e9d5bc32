import Crypto
import Foundation
import Logging
internal import CSystemShims
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The catalog on disk: the issues' JSON records in bucket files (the source of truth), an index journal
/// derived from the records (what `list` reads), and the saved list of pending downloads.
///
/// Reads need no lock: every bucket and index rewrite is a `rename`, every index append a whole line.
/// Writes go through ``write(_:)``, which holds the library's file lock, so several processes never
/// lose each other's changes. A change rewrites only the buckets of the records it changes, and buckets
/// are split as the library grows (``splitBytes``), so its cost does not grow with the library.
/// Blocking: call off the concurrency pool.
///
/// Crash safety: a change first names the keys it touches in `.catalog/intent`, then writes the
/// buckets (atomically: temporary file, fsync, rename, fsync of the folder), then appends the index
/// lines, then deletes the intent. The next writer (or reader) that finds an intent left by a killed
/// process re-derives those keys' index lines from their records, so the index never stays behind
/// the records.
package final class Catalog: Sendable {
    /// The version written into `library.json`. Version 3 has version 2's records and index; its saved
    /// downloads may be hard links to an anchor (``addMarker(_:key:)``) and its asset locks are bytes of one
    /// file (`AssetLock`), which a version-2 `issues` would not see: it could delete the files of a download in
    /// flight, so it must refuse the library (as a newer version's), not open it.
    static let version: Int64 = 3

    package let layout: LibraryLayout
    /// Whether each change is flushed to stable storage before it counts as done.
    let durable: Bool
    /// How far the index may grow past twice its live size before it is compacted.
    let compactionSlack: Int
    /// A bucket written larger than this splits every bucket into sixteen (one more key digit): about
    /// a hundred issues, so a change reads and writes at most this much.
    let splitBytes: Int
    /// Only a bucket of at least this many lines splits: one huge issue alone would stay huge.
    let splitMinLines: Int
    /// Where a failure after a committed change (a compaction) is told, as a warning: the change stands.
    let logger: Logger?
    /// The event log is compacted when it grows past this many bytes, down to the events of the last
    /// `eventLogAge` seconds among the last `eventLogCount` (and every event a hook has not acknowledged).
    let eventLogBytes: Int
    let eventLogCount: Int
    let eventLogAge: TimeInterval
    /// Called after a change that appended events has committed (to wake this process's hook delivery).
    let onEvents: (@Sendable () -> Void)?
    /// Called after each committed change with the issues whose records it changed (not the deleted ones):
    /// the library rewrites their sidecars (`issue.json`) from here, so every change of an issue reaches it.
    let onIssuesChanged: (@Sendable ([Issue]) -> Void)?

    package init(
        layout: LibraryLayout, durable: Bool = true, compactionSlack: Int = 8 << 20, splitBytes: Int = 96 << 10,
        splitMinLines: Int = 16, logger: Logger? = nil, eventLogBytes: Int = 16 << 20, eventLogCount: Int = 10_000,
        eventLogAge: TimeInterval = 30 * 86_400, onEvents: (@Sendable () -> Void)? = nil,
        onIssuesChanged: (@Sendable ([Issue]) -> Void)? = nil
    ) {
        self.logger = logger
        self.layout = layout
        self.durable = durable
        self.compactionSlack = compactionSlack
        self.splitBytes = splitBytes
        self.splitMinLines = splitMinLines
        self.eventLogBytes = eventLogBytes
        self.eventLogCount = eventLogCount
        self.eventLogAge = eventLogAge
        self.onEvents = onEvents
        self.onIssuesChanged = onIssuesChanged
    }

    /// The key under which a folder name is claimed: case-folded, so that two issues never get folders
    /// that one case-insensitive disk (a backup drive) would merge.
    package static func folderKey(_ folderName: String) -> String {
        key(for: folderName.lowercased())
    }

    /// The bucket digits a catalog of `count` issues starts with: about forty issues a bucket.
    static func digits(forCount count: Int) -> Int {
        var digits = 2
        while digits < 6, count > 40 << (4 * digits) { digits += 1 }
        return digits
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

    static func isKey(_ text: some StringProtocol) -> Bool {
        CatalogIndex.Key(String(text)) != nil
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
        return try bucket(key: key)?.asset(id, ofIssue: key, named: name)
    }

    /// The record stored under `key`, or nil.
    package func record(key: String) throws -> Issue? {
        try bucket(key: key)?.issue(key)
    }

    /// The bucket that holds `key`, or nil when there is none. Without the lock a split may move the
    /// buckets under the reader: a bucket missing after a change of depth is looked up again at the new depth.
    private func bucket(key: String) throws -> CatalogBucket? {
        var digits = try currentDigits()
        while true {
            let path = layout.bucket(key, digits: digits)
            if POSIX.exists(path) { return try CatalogBucket.load(path) }
            let now = try currentDigits()
            if now == digits { return nil }
            digits = now
        }
    }

    /// The record stored under `key` at a known depth (under the lock), or nil.
    func record(key: String, digits: Int) throws -> Issue? {
        try CatalogBucket.load(layout.bucket(key, digits: digits)).issue(key)
    }

    /// Opens the index for reading, first repairing what a killed writer left (which takes the lock).
    package func openIndex() throws -> CatalogIndexReader {
        if POSIX.exists(layout.intent) || !POSIX.exists(layout.index) {
            try withLock { try recover() }
        }
        guard let reader = try CatalogIndexReader(path: layout.index) else {
            throw NewsstandError(.manifestUnreadable, "\(layout.index) is missing")
        }
        return reader
    }

    // MARK: - Writing

    /// Runs `body` holding the library's file lock.
    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: layout.lockFile)
        defer { withExtendedLifetime(lock) {} }
        return try body()
    }

    /// Applies the changes `body` stages, under the lock, and makes them durable. If `body` throws,
    /// nothing is written.
    package func write<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        try withLock { try writeHoldingLock(body) }
    }

    /// ``write(_:)`` for a caller that already holds the lock (``withLock(_:)``).
    package func writeHoldingLock<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        try recover()
        var changes = CatalogChanges(catalog: self, digits: try currentDigits())
        let result = try body(&changes)
        try commit(changes)
        return result
    }

    private func commit(_ changes: CatalogChanges) throws {
        let keys = changes.changedKeys
        let claims = changes.claimChanges
        guard !keys.isEmpty || !claims.isEmpty || !changes.pendingAdded.isEmpty || !changes.pendingRemoved.isEmpty
        else { return }
        let digits = changes.digits
        // Each bucket touched is read (most already were, while staging), changed and rewritten once. Read
        // before the intent is written: a damaged bucket stops the change with nothing written, not with an
        // intent that every later writer would fail to finish.
        var buckets: [String: CatalogBucket] = [:]
        let cached = changes.buckets
        func bucket(_ key: String) throws -> String {
            let path = layout.bucket(key, digits: digits)
            if buckets[path] == nil { buckets[path] = try cached[path] ?? CatalogBucket.load(path) }
            return path
        }
        for key in keys {
            let path = try bucket(key)
            buckets[path]?.set(issue: changes.staged[key] ?? nil, key: key)
        }
        for (folderKey, owner) in claims {
            let path = try bucket(folderKey)
            buckets[path]?.set(claim: owner, key: folderKey)
        }
        // The events this change reports travel in its intent, so that a kill anywhere below still announces
        // exactly what landed (``recoverEvents(_:digits:)``).
        var events = derivedEvents(changes, keys: keys)
        var intent = IntentText(capacity: keys.count * 33)
        for key in keys { intent.entry(key) }
        for key in claims.keys.sorted() { intent.entry("claim \(key)") }
        try number(&events)
        intent.events(events)
        try writeIntent(intent)
        CrashPoint.reached("catalog-intent")
        // Markers go in before the records that say "downloading" and out after the records that say
        // otherwise, so the saved list is never missing an asset in flight.
        try POSIX.makeDirectory(layout.pending)
        try addMarkers(changes.pendingAdded.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) })
        // Many buckets: written without a flush each, then one syncfs for all of them.
        let bulk = buckets.count > 16
        let largest = try writeBuckets(buckets, flushEach: durable && !bulk)
        try removeMarkers(changes.pendingRemoved.sorted())
        if durable {
            if bulk { try syncFileSystem() }  // else writeBuckets flushed the records' folder
            // Only additions are flushed: a marker whose removal a power cut undoes points to an asset that is
            // complete or gone, and the next selection (or `verify`) drops it; most changes of a run only remove.
            if !changes.pendingAdded.isEmpty { try POSIX.fsyncDirectory(layout.pending) }
        }
        CrashPoint.reached("catalog-records-written")
        try appendEvents(events.map(\.event))
        CrashPoint.reached("catalog-events-appended")
        var lines = JSONWriter(capacity: keys.count * 512)
        for key in keys {
            if case .some(let issue)? = changes.staged[key] {
                CatalogIndex.line(key: key, issue: issue, into: &lines)
            } else {
                CatalogIndex.removal(key: key, into: &lines)
            }
        }
        try appendToIndex(lines.bytes)
        CrashPoint.reached("catalog-index-appended")
        try clearIntent()
        if largest > splitBytes, digits < 8 { try split(from: digits) }
        if !events.isEmpty { onEvents?() }
        if let onIssuesChanged {
            let changed = keys.compactMap { changes.staged[$0] ?? nil }
            if !changed.isEmpty { onIssuesChanged(changed) }
        }
    }

    /// Puts the intent in place, whole: written into the spare file, which is then renamed to `intent`. Not
    /// flushed (an intent only serves a change that a kill cut short; a power cut's loss is a missing index
    /// line, which `verify --repair` rebuilds). Called with the lock held, so one spare serves every writer.
    ///
    /// The spare, renamed back by ``clearIntent()``, is made once: a new temporary file per change and its
    /// deletion were a new inode per change, and on ext4 without a journal every new inode steps over the
    /// inodes freed in the last minute (a download run makes a change for every few assets).
    func writeIntent(_ intent: IntentText) throws {
        let spare = layout.intentSpare
        // A link, another kind of file or a second name in the spare's place: never written through; the
        // intent is written the usual way.
        guard let (fd, _) = POSIX.openSoleFile(spare, O_RDWR | O_CREAT) else {
            try AtomicFile.write(Data(intent.bytes), to: layout.intent, durable: false)
            return
        }
        do {
            try POSIX.call("cannot write", path: spare) { ftruncate(fd, 0) }
            try intent.bytes.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: spare) }
            _ = close(fd)
        } catch {
            _ = close(fd)
            throw error
        }
        try POSIX.rename(spare, layout.intent)
    }

    /// Ends a change: the intent goes back to being the spare.
    func clearIntent() throws {
        if rename(layout.intent, layout.intentSpare) != 0 { try POSIX.unlinkIfPresent(layout.intent) }
        // An import's intent holds every event with its record (105 MB for 100,000 issues): not kept between
        // changes. Emptied in place, so that the spare keeps its inode.
        if let size = POSIX.fileSize(layout.intentSpare), size > 1 << 20 { _ = truncate(layout.intentSpare, 0) }
    }

    /// Writes each bucket atomically (an empty one is deleted). With `flushEach`, each file is flushed as it
    /// is written and each folder holding them once at the end, so that every rename and deletion is on disk.
    /// - Returns: The size of the largest bucket written that holds enough issues to be worth splitting.
    func writeBuckets(_ buckets: [String: CatalogBucket], flushEach: Bool) throws -> Int {
        var largest = 0
        var folders: Set<String> = []
        for (path, bucket) in buckets.sorted(by: { $0.key < $1.key }) {
            if bucket.isEmpty {
                try POSIX.unlinkIfPresent(path)
            } else {
                let bytes = bucket.encoded()
                if bucket.lines.count >= splitMinLines { largest = max(largest, bytes.count) }
                try AtomicFile.write(
                    Data(bytes), to: path, durable: flushEach, flushingFolder: false,
                    crashPoint: "catalog-record-temporary")
            }
            folders.insert((path as NSString).deletingLastPathComponent)
            CrashPoint.reached("catalog-record")
        }
        if flushEach {
            for folder in folders.sorted() { try POSIX.fsyncDirectory(folder) }
        }
        return largest
    }

    func syncFileSystem() throws {
        let fd = try POSIX.open(layout.root, O_RDONLY | O_DIRECTORY)
        defer { _ = close(fd) }
        try POSIX.call("cannot flush", path: layout.root) { newsstand_syncfs(fd) }
    }
}

/// An intent's text, built as bytes: its entries (keys, claims, events with their records) one a line. Joined
/// from strings, an import of 100,000 issues held it three times over (the lines, the joined text, its bytes).
struct IntentText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Appends one entry.
    mutating func entry(_ text: String) {
        if !bytes.isEmpty { bytes.append(0x0A) }
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends numbered events, each as `event<TAB>condition<TAB>line` (``Catalog/recoverEvents(_:digits:)``).
    mutating func events(_ events: [Catalog.PendingEvent]) {
        for pending in events {
            entry("event\t\(pending.condition)\t")
            bytes.append(contentsOf: pending.event.encoded().dropLast())  // without its newline
        }
    }
}
