import Foundation
import Newsstand
import NewsstandCatalog
import NewsstandCore
import Synchronization

/// The shelf's view of the catalog's index: its live entries sorted newest first, kept while the index
/// file is unchanged (same inode, size and mtime), so that a page is a slice of an array plus one read of
/// each shown issue's record — never a read of every record. A change of the index (any commit, by this
/// process or a CLI beside it) makes the next request rebuild the view from the index.
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
            let snapshot = try ShelfSnapshot(identity: identity, reader: try catalog.openIndex())
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
    private let reader: CatalogIndexReader
    private let facetCache = Mutex<FacetTable?>(nil)

    /// What the filters by publication and subscription need of a record.
    struct Facets: Sendable {
        var publication: String
        var subscription: String?
    }

    init(identity: [Int], reader: CatalogIndexReader) throws {
        self.identity = identity
        self.reader = reader
        var names = PackedNames()
        entries = try reader.sorted { entry in
            names.append(entry.summary.name)
            return ShelfEntry(entry)
        }
        self.names = names
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

/// One issue of the shelf: where its record is in the index file (40 bits of offset: a terabyte) and what
/// the status filters need.
struct ShelfEntry: Sendable {
    private var offsetLow: UInt32
    var recordLength: UInt32
    private var offsetHigh: UInt8
    var status: Issue.Status
    var isPinned: Bool

    init(_ entry: CatalogIndex.Entry) {
        offsetLow = UInt32(truncatingIfNeeded: entry.recordOffset)
        offsetHigh = UInt8(truncatingIfNeeded: entry.recordOffset >> 32)
        recordLength = UInt32(truncatingIfNeeded: entry.recordLength)
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
