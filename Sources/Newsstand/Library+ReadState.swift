import Foundation
import NewsstandCatalog
import NewsstandCore
import NewsstandDownload
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// NewsstandKit's "new" badge: an issue is new until it is opened (`issues open`, the browser) or marked
/// read (`issues mark`, the HTTP API).
///
/// Kept in a small file of its own, `.read-state.json` (a sorted list of the names of the issues that were
/// read), not in the issue records: records and the index keep their format, old libraries read as before
/// (every issue new), and marking an issue read is one small atomic write under the catalog's lock instead
/// of a catalog commit. A removed issue's name is dropped from the file by the next change of it.
extension Library {
    /// Marks the named issues read (or new again).
    /// - Parameters:
    ///   - read: True for read, false for new.
    ///   - names: Issue names; every one must exist.
    /// - Throws: `.issueNotFound` naming the first unknown issue (nothing changes then), or a write failure.
    public func setRead(_ read: Bool, issuesNamed names: [String]) async throws {
        let catalog = self.catalog
        let store = ReadStateStore(layout: layout)
        try await runBlocking {
            for name in names where try catalog.issue(named: name) == nil {
                throw NewsstandError.issueNotFound(name, in: catalog.layout.root)
            }
            try catalog.withLock {
                try store.update { set in
                    for name in names {
                        if read { set.insert(name) } else { set.remove(name) }
                    }
                }
            }
        }
    }

    /// The names of the issues that were read; every other issue is new. Cached by the file's identity, so
    /// asking often (every shelf page) reads the file only after it changed.
    public nonisolated func readIssueNames() throws -> Set<String> {
        try ReadStateStore.cached(layout: layout).names()
    }
}

/// `.read-state.json`: `{"read":["name",…],"version":1}`. Blocking.
package final class ReadStateStore: Sendable {
    static let version = 1
    let path: String
    private let loaded = Mutex<(identity: [Int], names: Set<String>)?>(nil)

    private static let stores = Mutex<[String: ReadStateStore]>([:])

    /// One store per library path in this process, so that its cache serves every caller.
    package static func cached(layout: LibraryLayout) -> ReadStateStore {
        stores.withLock { stores in
            if let store = stores[layout.readState] { return store }
            let store = ReadStateStore(layout: layout)
            stores[layout.readState] = store
            return store
        }
    }

    package init(layout: LibraryLayout) {
        path = layout.readState
    }

    private struct Contents: Codable {
        var version: Int
        var read: [String]
    }

    /// The read names, from the cache while the file is unchanged.
    package func names() throws -> Set<String> {
        let identity = Self.identity(path)
        if let current = loaded.withLock({ $0 }), current.identity == identity { return current.names }
        let names = try read()
        loaded.withLock { $0 = (identity, names) }
        return names
    }

    private func read() throws -> Set<String> {
        guard let data = try AtomicFile.read(path) else { return [] }
        do {
            let contents = try JSONDecoder().decode(Contents.self, from: data)
            guard contents.version <= Self.version else {
                throw NewsstandError(
                    .manifestFromNewerVersion, "\(path) is of version \(contents.version), newer than this program reads")
            }
            return Set(contents.read)
        } catch let error as NewsstandError {
            throw error
        } catch {
            throw NewsstandError(.manifestUnreadable, "cannot read \(path): \(error)", underlying: error)
        }
    }

    /// Reads the file afresh, changes the set and writes it back atomically. Call under the catalog's lock.
    package func update(_ change: (inout Set<String>) -> Void) throws {
        var names = try read()
        let before = names
        change(&names)
        guard names != before else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(encoder.encode(Contents(version: Self.version, read: names.sorted())), to: path)
        loaded.withLock { $0 = nil }
    }

    private static func identity(_ path: String) -> [Int] {
        POSIX.changeIdentity(path)
    }
}
