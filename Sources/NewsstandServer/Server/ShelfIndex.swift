internal import CSystemShims
import Foundation
import Newsstand
import NewsstandCatalog
import NewsstandCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
            let reader = try catalog.openIndex()
            let entries = try reader.sortedEntries()
            let snapshot = ShelfSnapshot(identity: identity, reader: reader, entries: entries)
            current.withLock { $0 = snapshot }
            Self.returnFreedMemory()
            return snapshot
        }
    }

    /// Reading 100,000 index lines goes through megabytes of buffers that malloc would otherwise keep:
    /// hand them back, so that an idle server stays small (`malloc_trim(3)`).
    static func returnFreedMemory() {
        newsstand_return_freed_memory()
    }

    private static func identity(_ path: String) -> [Int] {
        POSIX.changeIdentity(path)
    }
}

/// One version of the index, sorted newest first.
///
/// `@unchecked Sendable`: everything is immutable after `init` except the facets' cache, which a `Mutex`
/// guards; the reader only `pread`s its open descriptor (no shared file position), so a replaced index
/// (a compaction renames a new file into place) is still read consistently through the old descriptor.
final class ShelfSnapshot: @unchecked Sendable {
    let identity: [Int]
    let entries: [CatalogIndex.Entry]
    private let reader: CatalogIndexReader
    private let facetCache = Mutex<[Facets]?>(nil)
    /// Lower-cased names, made by the first search (kept apart so that a shelf nobody searches does not
    /// hold a second copy of every name).
    private let searchCache = Mutex<SearchNames?>(nil)

    /// What the filters by publication and subscription need of a record.
    struct Facets: Sendable {
        var publication: String
        var subscription: String?
    }

    init(identity: [Int], reader: CatalogIndexReader, entries: [CatalogIndex.Entry]) {
        self.identity = identity
        self.reader = reader
        self.entries = entries
    }

    /// Every entry's name, lower-cased, in shelf order.
    func lowercasedNames() -> SearchNames {
        if let cached = searchCache.withLock({ $0 }) { return cached }
        let names = SearchNames(entries.lazy.map { $0.summary.name.lowercased() })
        searchCache.withLock { $0 = names }
        ShelfIndex.returnFreedMemory()
        return names
    }

    /// The stored record of the entry at `position`.
    func record(at position: Int) throws -> Issue {
        var buffer: [UInt8] = []
        try reader.recordBytes(entries[position], into: &buffer)
        return try buffer.withUnsafeBufferPointer { try IssueRecord.decode($0, path: reader.path) }
    }

    /// Every entry's publication and subscription, read from the records once per version of the index
    /// (only when a filter asks for them). Blocking.
    func facets() throws -> [Facets] {
        if let cached = facetCache.withLock({ $0 }) { return cached }
        var buffer: [UInt8] = []
        var facets: [Facets] = []
        facets.reserveCapacity(entries.count)
        for entry in entries {
            try reader.recordBytes(entry, into: &buffer)
            let issue = try buffer.withUnsafeBufferPointer { try IssueRecord.decode($0, path: reader.path) }
            facets.append(Facets(publication: issue.publicationName, subscription: issue.origin?.subscriptionID))
        }
        facetCache.withLock { $0 = facets }
        ShelfIndex.returnFreedMemory()
        return facets
    }
}

/// Names for the shelf's search, lower-cased, as one buffer of UTF-8 bytes and where each name ends: 100,000
/// names held as `[String]` took 9.5 MiB of an idle server after one search (a string object each), as bytes
/// about 3.5 MiB. A search matches bytes, so "e" also finds an "é" written as "e" and a combining accent.
struct SearchNames: Sendable {
    private var bytes: [UInt8] = []
    private var ends: [UInt32] = []

    init(_ names: some Sequence<String>) {
        for name in names {
            bytes.append(contentsOf: name.utf8)
            ends.append(UInt32(truncatingIfNeeded: bytes.count))
        }
    }

    /// Whether the name at `position` contains `needle` (lower-cased UTF-8 bytes).
    func name(at position: Int, contains needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        let start = position == 0 ? 0 : Int(ends[position - 1])
        let end = Int(ends[position])
        guard end - start >= needle.count else { return false }
        return bytes.withUnsafeBufferPointer { all in
            needle.withUnsafeBufferPointer { wanted in
                let first = wanted[0]
                var at = start
                while at <= end - wanted.count {
                    if all[at] == first, memcmp(all.baseAddress! + at, wanted.baseAddress!, wanted.count) == 0 { return true }
                    at += 1
                }
                return false
            }
        }
    }
}
