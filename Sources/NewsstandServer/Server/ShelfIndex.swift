import Foundation
import Newsstand
import NewsstandCatalog
import NewsstandCore
import Synchronization

/// The shelf's view of the catalog: every issue sorted newest first with what the filters need, kept while the
/// catalog's generation (a counter every commit raises, by this process or a CLI beside it) stays, so that a
/// page is a slice of an array plus one read of each shown issue's record. After a change the next request
/// reads the view again from the catalog's index on `(day DESC, name)`.
final class ShelfIndex: Sendable {
    private let catalog: Catalog
    private let current = Mutex<ShelfSnapshot?>(nil)
    /// Serialises rebuilds, so that a burst of requests after a change builds the view once.
    private let building = Mutex<Void>(())

    init(catalog: Catalog) {
        self.catalog = catalog
    }

    /// The view of the catalog as it is now. Blocking (reads the catalog when it changed).
    func snapshot() throws -> ShelfSnapshot {
        let generation = try catalog.generation()
        if let snapshot = current.withLock({ $0 }), snapshot.generation == generation { return snapshot }
        return try building.withLock { _ in
            let generation = try catalog.generation()
            if let snapshot = current.withLock({ $0 }), snapshot.generation == generation { return snapshot }
            let snapshot = try ShelfSnapshot(catalog: catalog)
            current.withLock { $0 = snapshot }
            return snapshot
        }
    }
}

/// One version of the catalog, sorted newest first, packed: 8 bytes an issue, its name's bytes in one buffer,
/// and its publication and subscription as numbers into the few distinct values a library has.
final class ShelfSnapshot: Sendable {
    /// The catalog's generation this view was read at (read in the same snapshot as the rows).
    let generation: Int64
    let entries: [ShelfEntry]
    /// Every entry's name, in shelf order.
    let names: PackedNames
    private let facetTable: FacetTable
    private let catalog: Catalog

    /// What the filters by publication and subscription need of a record.
    struct Facets: Sendable {
        var publication: String
        var subscription: String?
    }

    init(catalog: Catalog) throws {
        self.catalog = catalog
        var entries: [ShelfEntry] = []
        var names = PackedNames()
        var facets = FacetTable()
        generation = try catalog.forEachShelfRow { row in
            entries.append(ShelfEntry(day: row.day, status: row.status, isPinned: row.isPinned))
            names.append(row.name)
            facets.append(Facets(publication: row.publication, subscription: row.subscription))
        }
        self.entries = entries
        self.names = names
        self.facetTable = facets
    }

    /// The key of the entry at `position` (the catalog's key of its name: worked out, not kept).
    func key(at position: Int) -> String {
        ServerState.key(for: names[position])
    }

    /// The stored record of the entry at `position` (as it is now: a change since the view was read shows).
    func record(at position: Int) throws -> Issue {
        guard let issue = try catalog.record(key: key(at: position)) else {
            throw NewsstandError.issueNotFound(names[position], in: catalog.layout.root)
        }
        return issue
    }

    /// Every entry's publication and subscription.
    func facets() throws -> FacetTable { facetTable }
}

/// One issue of the shelf: what the status filters need. 8 bytes.
struct ShelfEntry: Sendable, Equatable {
    /// The date as YYYYMMDD.
    let day: Int32
    var status: Issue.Status
    var isPinned: Bool
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
