import Foundation
import Newsstand
import NewsstandCatalog
import NewsstandCore
import Synchronization

/// The shelf's view of the catalog's index: its live entries sorted newest first, kept while the index
/// file is unchanged (same inode, size and mtime), so that a page is a slice of an array plus one read of
/// each shown issue's record — never a read of every record. A change of the index (any commit, by this
/// process or a CLI beside it) makes the next request bring the view up to date: by applying the lines
/// appended since (a few: an add, a download's states), else by reading the index again (a rewrite, or a
/// change of hundreds of issues). Read again, 100,000 issues took 237 ms, which the first shelf page after
/// every change waited for.
final class ShelfIndex: Sendable {
    private let catalog: Catalog
    private let current = Mutex<ShelfSnapshot?>(nil)
    /// Serialises rebuilds, so that a burst of requests after a change builds the view once.
    private let building = Mutex<Void>(())

    init(catalog: Catalog) {
        self.catalog = catalog
    }

    /// The view of the index as it is now. Blocking (reads the index when it changed).
    func snapshot() throws -> ShelfSnapshot {
        let identity = Self.identity(catalog.layout.index)
        if let snapshot = current.withLock({ $0 }), snapshot.identity == identity { return snapshot }
        return try building.withLock { _ in
            let identity = Self.identity(catalog.layout.index)
            if let snapshot = current.withLock({ $0 }), snapshot.identity == identity { return snapshot }
            // The identity is taken before the read: a change during it makes the next request read again.
            let reader = try catalog.openIndex()
            if let old = current.withLock({ $0 }), let updated = old.updated(identity: identity, reader: reader) {
                current.withLock { $0 = updated }
                return updated
            }
            let snapshot = try ShelfSnapshot(identity: identity, reader: reader)
            current.withLock { $0 = snapshot }
            // Reading 100,000 index lines went through megabytes of buffers that malloc would otherwise keep.
            POSIX.returnFreedMemory()
            return snapshot
        }
    }

    private static func identity(_ path: String) -> [Int] {
        POSIX.changeIdentity(path)
    }
}

/// One version of the index, sorted newest first, packed: 12 bytes an issue and its name's bytes in one
/// buffer. Held as `[CatalogIndex.Entry]` (a summary with strings each) the view of 100,000 issues took
/// about 23 MiB of the idle server; packed, about 4 MiB.
///
/// `@unchecked Sendable`: everything is immutable after `init` except the facets' cache, which a `Mutex`
/// guards; the reader only `pread`s its open descriptor (no shared file position), so a replaced index (a
/// compaction renames a new file into place) is still read consistently through the old descriptor.
final class ShelfSnapshot: @unchecked Sendable {
    let identity: [Int]
    let entries: [ShelfEntry]
    /// Every entry's name, in shelf order.
    let names: PackedNames
    /// The index file's id (a new one each time it is rewritten; nil for an index from before ids) and where
    /// the lines this view holds end: while the id stays, the next version is this view and the lines after.
    let indexID: String?
    let end: Int
    private let reader: CatalogIndexReader
    private let facetCache = Mutex<FacetTable?>(nil)

    /// How many appended lines are applied one by one (each moves the arrays once) before reading the
    /// whole index is the cheaper way.
    static let appliedLinesLimit = 256

    /// What the filters by publication and subscription need of a record.
    struct Facets: Sendable {
        var publication: String
        var subscription: String?
    }

    init(identity: [Int], reader: CatalogIndexReader) throws {
        self.identity = identity
        self.reader = reader
        let head = try reader.head()
        indexID = head.id
        end = try reader.lineEnd(atOrBefore: head.file)
        var names = PackedNames()
        entries = try reader.sorted { entry in
            names.append(entry.summary.name)
            return ShelfEntry(entry)
        }
        self.names = names
    }

    private init(
        identity: [Int], reader: CatalogIndexReader, entries: [ShelfEntry], names: PackedNames, indexID: String?,
        end: Int
    ) {
        self.identity = identity
        self.reader = reader
        self.entries = entries
        self.names = names
        self.indexID = indexID
        self.end = end
    }

    /// This view brought up to the index `reader` has open, by the lines appended since ``end``; nil when the
    /// index was rewritten (another id), has too many new lines, or one cannot be read (the caller then reads
    /// the whole index, and reports what is wrong with it).
    func updated(identity: [Int], reader: CatalogIndexReader) -> ShelfSnapshot? {
        guard let indexID,
            let appended = try? reader.appended(after: end, limit: Self.appliedLinesLimit),
            appended.id == indexID
        else { return nil }
        var entries = self.entries
        var names = self.names
        for line in appended.lines {
            switch line {
            case .header:
                return nil
            case .issue(let entry):
                if let old = Self.position(of: entry.key, in: entries, names: names) {
                    entries.remove(at: old)
                    names.remove(at: old)
                }
                let new = ShelfEntry(entry)
                let at = Self.insertionPoint(day: new.day, name: entry.summary.name, in: entries, names: names)
                entries.insert(new, at: at)
                names.insert(entry.summary.name, at: at)
            case .removed(let key):
                if let old = Self.position(of: key, in: entries, names: names) {
                    entries.remove(at: old)
                    names.remove(at: old)
                }
            }
        }
        return ShelfSnapshot(
            identity: identity, reader: reader, entries: entries, names: names, indexID: indexID, end: appended.end)
    }

    /// Where the issue with `key` is: a scan of the keys' first 64 bits, each match confirmed by its name's key.
    private static func position(of key: CatalogIndex.Key, in entries: [ShelfEntry], names: PackedNames) -> Int? {
        let prefix = key.prefix
        for position in entries.indices where entries[position].keyPrefix == prefix {
            if CatalogIndex.Key(Catalog.key(for: names[position])) == key { return position }
        }
        return nil
    }

    /// Where an issue of `day` named `name` goes in the shelf's order (``CatalogIndexReader/sorted(status:_:)``'s:
    /// newest day first, then by name).
    private static func insertionPoint(day: Int32, name: String, in entries: [ShelfEntry], names: PackedNames) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let before = entries[middle].day != day ? entries[middle].day > day : names[middle] < name
            if before { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The key of the entry at `position` (the catalog's key of its name: worked out, not kept).
    func key(at position: Int) -> String {
        ServerState.key(for: names[position])
    }

    /// The stored record of the entry at `position`.
    func record(at position: Int) throws -> Issue {
        var buffer: [UInt8] = []
        let entry = entries[position]
        try reader.recordBytes(offset: entry.recordOffset, length: Int32(bitPattern: entry.recordLength), into: &buffer)
        return try buffer.withUnsafeBufferPointer { try IssueRecord.decode($0, path: reader.path) }
    }

    /// Every entry's publication and subscription, read from the records once per version of the index
    /// (only when a filter asks for them). Blocking.
    func facets() throws -> FacetTable {
        if let cached = facetCache.withLock({ $0 }) { return cached }
        var table = FacetTable()
        table.reserveCapacity(entries.count)
        for position in entries.indices {
            let issue = try record(at: position)
            table.append(Facets(publication: issue.publicationName, subscription: issue.origin?.subscriptionID))
        }
        facetCache.withLock { $0 = table }
        POSIX.returnFreedMemory()
        return table
    }
}

/// One issue of the shelf: where its record is in the index file (40 bits of offset: a terabyte), what the
/// status filters need, and what finds and places it when a later index line changes it (its key's first
/// 64 bits, its day). 24 bytes.
struct ShelfEntry: Sendable, Equatable {
    let keyPrefix: UInt64
    private var offsetLow: UInt32
    var recordLength: UInt32
    /// The date as YYYYMMDD.
    let day: Int32
    private var offsetHigh: UInt8
    var status: Issue.Status
    var isPinned: Bool

    init(_ entry: CatalogIndex.Entry) {
        keyPrefix = entry.key.prefix
        offsetLow = UInt32(truncatingIfNeeded: entry.recordOffset)
        offsetHigh = UInt8(truncatingIfNeeded: entry.recordOffset >> 32)
        recordLength = UInt32(truncatingIfNeeded: entry.recordLength)
        let date = entry.summary.date
        day = Int32(date.year * 10_000 + date.month * 100 + date.day)
        status = entry.summary.status
        isPinned = entry.summary.isPinned
    }

    var recordOffset: Int { Int(offsetHigh) << 32 | Int(offsetLow) }
}

/// Each entry's publication and subscription as numbers into the few distinct values a library has: 8 bytes
/// an issue, where a pair of strings was about 50.
struct FacetTable: Sendable {
    private var publications = Numbering()
    /// Numbered from 1: 0 is an issue of no subscription.
    private var subscriptions = Numbering()
    private var rows: [(publication: UInt32, subscription: UInt32)] = []

    mutating func reserveCapacity(_ count: Int) { rows.reserveCapacity(count) }

    mutating func append(_ facets: ShelfSnapshot.Facets) {
        let subscription = facets.subscription.map { subscriptions.number(of: $0) + 1 } ?? 0
        rows.append((publications.number(of: facets.publication), subscription))
    }

    subscript(position: Int) -> ShelfSnapshot.Facets {
        let row = rows[position]
        return ShelfSnapshot.Facets(
            publication: publications[row.publication],
            subscription: row.subscription == 0 ? nil : subscriptions[row.subscription - 1])
    }

    /// Distinct strings, each numbered in the order first seen.
    private struct Numbering: Sendable {
        private var values: [String] = []
        private var numbers: [String: UInt32] = [:]

        mutating func number(of value: String) -> UInt32 {
            if let known = numbers[value] { return known }
            let number = UInt32(values.count)
            values.append(value)
            numbers[value] = number
            return number
        }

        subscript(number: UInt32) -> String { values[Int(number)] }
    }
}

/// Names as one buffer of UTF-8 bytes and where each name ends: 100,000 names held as `[String]` took 9.5 MiB
/// of an idle server (a string object each), as bytes about 2.5 MiB.
struct PackedNames: Sendable {
    private var bytes: [UInt8] = []
    private var ends: [UInt32] = []

    mutating func append(_ name: String) {
        bytes.append(contentsOf: name.utf8)
        ends.append(UInt32(truncatingIfNeeded: bytes.count))
    }

    mutating func insert(_ name: String, at position: Int) {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        let utf8 = Array(name.utf8)
        bytes.insert(contentsOf: utf8, at: start)
        ends.insert(UInt32(truncatingIfNeeded: start + utf8.count), at: position)
        let added = UInt32(truncatingIfNeeded: utf8.count)
        for later in (position + 1)..<ends.count { ends[later] &+= added }
    }

    mutating func remove(at position: Int) {
        let range = range(position)
        bytes.removeSubrange(range)
        ends.remove(at: position)
        let removed = UInt32(truncatingIfNeeded: range.count)
        for later in position..<ends.count { ends[later] &-= removed }
    }

    var count: Int { ends.count }

    subscript(position: Int) -> String {
        String(decoding: bytes[range(position)], as: UTF8.self)
    }

    private func range(_ position: Int) -> Range<Int> {
        (position == 0 ? 0 : Int(ends[position - 1]))..<Int(ends[position])
    }

    /// Whether the name at `position`, lower-cased, contains `needle` (lower-cased UTF-8 bytes): the shelf's
    /// search. An ASCII name is folded byte by byte as it is compared (no lower-cased copy of every name is
    /// kept); another goes through `String.lowercased()`. So "e" also finds an "é" written as "e" and a
    /// combining accent.
    func name(at position: Int, containsLowercased needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        let range = range(position)
        guard range.count >= needle.count else { return false }
        return bytes.withUnsafeBufferPointer { all in
            let name = UnsafeBufferPointer(rebasing: all[range])
            if name.contains(where: { $0 >= 0x80 }) {
                return Self.contains(Array(String(decoding: name, as: UTF8.self).lowercased().utf8)[...], needle)
            }
            return Self.contains(name, needle) { byte in
                byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
        }
    }

    private static func contains(
        _ haystack: some RandomAccessCollection<UInt8>, _ needle: [UInt8], folding fold: (UInt8) -> UInt8 = { $0 }
    ) -> Bool {
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        var start = haystack.startIndex
        let last = haystack.index(haystack.endIndex, offsetBy: -needle.count)
        while start <= last {
            if fold(haystack[start]) == first {
                var matched = true
                var at = haystack.index(after: start)
                for wanted in needle.dropFirst() {
                    if fold(haystack[at]) != wanted {
                        matched = false
                        break
                    }
                    at = haystack.index(after: at)
                }
                if matched { return true }
            }
            start = haystack.index(after: start)
        }
        return false
    }
}
