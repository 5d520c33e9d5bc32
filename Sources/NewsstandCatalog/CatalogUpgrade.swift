import Foundation
import GRDB
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Upgrades a version 1, 2 or 3 library to the SQLite catalog of version 4.
///
/// The database is built from the old files in one transaction; then `library.json` is replaced by the version-4
/// marker: that rename is the commit. A kill before it leaves the old library as it was (the next open deletes
/// the half-built database and starts again); a kill after it leaves old files that the next open deletes
/// (``removeLeftovers(_:)``). Nothing old is deleted before the commit. Runs under the lock.
struct CatalogUpgrade {
    let catalog: Catalog
    private var layout: LibraryLayout { catalog.layout }

    /// Version 1: one `library.json` holding every issue and the saved list.
    func run(version1 data: Data) throws {
        let (issues, pending) = try decode(data)
        try build { db in
            var keys: [String: String] = [:]  // asset id → issue key
            for var issue in issues {
                issue.updateStatus()
                let key = Catalog.key(for: issue.name)
                try CatalogRows.put(issue, key: key, db)
                for asset in issue.assets { keys[asset.id] = key }
                // Version 1 retried failed assets by scanning every issue; later versions keep them in the list.
                for asset in issue.assets where asset.state == .failed || asset.state == .downloading {
                    try CatalogRows.markPending(asset.id, key: key, db)
                }
            }
            for id in pending { if let key = keys[id] { try CatalogRows.markPending(id, key: key, db) } }
        }
    }

    /// Versions 2 and 3: records in the JSON-lines buckets of `digits` key digits, the saved list as markers in
    /// `.catalog/pending`, the event log in `.catalog/events.jsonl` (its cursors kept, so hooks carry on).
    func run(buckets digits: Int) throws {
        let folder = layout.records(digits: digits)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        try build { db in
            var count = 0
            for name in names where name.hasSuffix(".jsonl") && !name.hasPrefix(".") {
                for (key, issue) in try CatalogBucket.load("\(folder)/\(name)").issues() {
                    try CatalogRows.put(issue, key: key, db)
                    count += 1
                    if count % 100 == 0 { CrashPoint.reached("upgrade-rows") }
                }
            }
            let markers = ((try? FileManager.default.contentsOfDirectory(atPath: layout.pending)) ?? []).sorted()
            for id in markers where !id.hasPrefix(".") && SafePathComponent(validating: id) != nil {
                guard let key = Self.legacyMarker("\(layout.pending)/\(id)"), CatalogIndexKey.isKey(key) else { continue }
                try CatalogRows.markPending(id, key: key, db)
            }
            if let fd = try POSIX.openIfExists(layout.legacyEvents, O_RDONLY) {
                defer { _ = close(fd) }
                let insert = try db.makeStatement(sql: "INSERT OR REPLACE INTO events (cursor, time, event) VALUES (?, ?, ?)")
                try LineFile.forEachLine(fd, path: layout.legacyEvents) { line, _ in
                    // A torn last line (a power cut) or a damaged one is not an event: left out.
                    guard !line.isEmpty, let event = try? CatalogEvent.decode(line, path: layout.legacyEvents) else { return }
                    try insert.execute(arguments: [
                        event.cursor, event.time.timeIntervalSince1970, String(decoding: line, as: UTF8.self),
                    ])
                }
            }
        }
    }

    /// Builds the database in one transaction over a fresh file, then commits the upgrade (the marker) and
    /// deletes the old files.
    private func build(_ fill: (Database) throws -> Void) throws {
        // A database an upgrade killed before its commit left: not trusted, built again.
        for path in Self.databaseFiles(layout) { try POSIX.unlinkIfPresent(path) }
        try catalog.fillNewDatabase(fill)
        CrashPoint.reached("upgrade-committed")
        try Self.removeLeftovers(layout)
    }

    /// The database and its WAL files.
    static func databaseFiles(_ layout: LibraryLayout) -> [String] {
        [layout.database, layout.database + "-wal", layout.database + "-shm", layout.database + "-journal"]
    }

    /// What versions 1 to 3 kept that version 4 does not.
    static func leftovers(_ layout: LibraryLayout) -> [String] {
        let depths = (1...8).map { layout.records(digits: $0) }
        return depths + [
            layout.catalog + "/index.jsonl", layout.catalog + "/summary.jsonl", layout.pending,
            layout.catalog + "/intent", layout.catalog + "/.intent-spare", layout.catalog + "/split",
            layout.legacyEvents, layout.manifestBackup, layout.catalogUpgrade,
        ]
    }

    /// Deletes the files of the catalog an upgrade replaced (after its commit only).
    static func removeLeftovers(_ layout: LibraryLayout) throws {
        for path in leftovers(layout) where POSIX.linkStatus(path) != nil { try TreeRemover.remove(path) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.catalog)) ?? []
        for name in names
        where LibraryLayout.isTemporary(name, of: "index.jsonl") || LibraryLayout.isTemporary(name, of: "summary.jsonl")
            || LibraryLayout.isTemporary(name, of: "intent") || LibraryLayout.isTemporary(name, of: "events.jsonl")
        {
            try POSIX.unlinkIfPresent("\(layout.catalog)/\(name)")
        }
    }

    /// The deepest bucket folder of an older catalog, or nil.
    static func bucketDigitsOnDisk(_ layout: LibraryLayout) -> Int? {
        (1...8).last { POSIX.exists(layout.records(digits: $0)) }
    }

    /// The key a saved-list marker of versions 2 and 3 gives: a symlink's target, or the content of a plain
    /// file (a hard link to its issue's anchor). Nil when there is none or it is not a key's length.
    static func legacyMarker(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return -1 }
            return readlink(path, base, raw.count)
        }
        if n > 0 { return String(decoding: buffer[0..<n], as: UTF8.self) }
        guard n < 0, errno == EINVAL else { return nil }  // EINVAL: not a symlink
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)  // a FIFO in its place never blocks
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count > 0 && count < 64 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Reads a version-1 document: `{"issues": [...], "pendingDownloads": [...], "version": 1}`.
    private func decode(_ data: Data) throws -> ([Issue], [String]) {
        let path = catalog.layout.manifest
        do {
            let root = try data.withUnsafeBytes { raw in try JSONReader.parse(raw.bindMemory(to: UInt8.self)) }
            guard case .object(let object) = root else { throw CatalogShapeError("the document is not an object") }
            let issues = try object.array("issues", at: "").enumerated().map { index, value in
                try Issue(json: value, at: "issues[\(index)]")
            }
            let pending = try object.array("pendingDownloads", at: "").enumerated().map { index, value in
                guard case .string(let id) = value else {
                    throw CatalogShapeError("pendingDownloads[\(index)] is not a string")
                }
                return id
            }
            var names = Set<String>()
            var folders = Set<String>()
            var ids = Set<String>()
            for issue in issues {
                guard names.insert(issue.name).inserted, folders.insert(issue.folderName).inserted else {
                    throw CatalogShapeError("issue \(issue.name.debugDescription) or its folder is listed twice")
                }
                for asset in issue.assets where !ids.insert(asset.id).inserted {
                    throw CatalogShapeError("asset \(asset.id) is listed twice")
                }
            }
            return (issues, pending)
        } catch {
            throw NewsstandError(
                .manifestUnreadable,
                "\(path) is not a valid version-1 library manifest (\(error)); it was left untouched",
                underlying: error)
        }
    }
}

/// Whether a text is a record key: 32 lowercase hex digits.
enum CatalogIndexKey {
    static func isKey(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
