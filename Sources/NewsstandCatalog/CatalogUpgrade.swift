import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Upgrades a version-1 library (one `library.json` holding every issue) to the version-2 catalog.
///
/// The old file is copied to `library.json.v1` first, the new catalog is built beside the old one in
/// `.catalog-upgrade` and moved into place, and only then is `library.json` replaced by the version-2
/// marker: that rename is the commit. A crash before it leaves `library.json` as it was, and the next
/// open starts the upgrade over; the copy goes once the upgrade has committed. Runs under the lock.
struct CatalogUpgrade {
    let catalog: Catalog

    func run(version1 data: Data) throws {
        let layout = catalog.layout
        let (issues, pending) = try decode(data)
        try AtomicFile.write(data, to: layout.manifestBackup, durable: catalog.durable)
        CrashPoint.reached("upgrade-backup")

        let base = layout.catalogUpgrade
        try TreeRemover.remove(base)
        let digits = Catalog.digits(forCount: issues.count)
        try catalog.makeEmptyCatalog(at: base, digits: digits)
        var keys: [String: String] = [:]  // asset id → issue key
        var buckets: [String: CatalogBucket] = [:]
        func put(_ key: String, _ change: (inout CatalogBucket) -> Void) {
            let path = "\(base)/issues-\(digits)/\(key.prefix(digits)).jsonl"
            change(&buckets[path, default: CatalogBucket(path: path, lines: [])])
        }
        var lines = JSONWriter(capacity: issues.count * 700)
        for var issue in issues {
            issue.updateStatus()
            let key = Catalog.key(for: issue.name)
            put(key) { $0.set(issue: issue, key: key) }
            let folderKey = Catalog.folderKey(issue.claimName)
            put(folderKey) { $0.set(claim: key, key: folderKey) }
            CatalogIndex.line(key: key, issue: issue, into: &lines)
            for asset in issue.assets { keys[asset.id] = key }
            // Version 1 retried failed assets by scanning every issue; version 2 keeps them in the list.
            for asset in issue.assets where asset.state == .failed || asset.state == .downloading {
                try symlinkMarker(asset.id, key: key, base: base)
            }
        }
        for (path, bucket) in buckets { try AtomicFile.write(Data(bucket.encoded()), to: path, durable: false) }
        for id in pending { if let key = keys[id] { try symlinkMarker(id, key: key, base: base) } }
        try catalog.writeIndex(to: "\(base)/index.jsonl") { emit in try emit(lines.bytes) }
        if catalog.durable { try catalog.syncFileSystem() }
        CrashPoint.reached("upgrade-built")

        // A catalog left by an earlier upgrade that never committed (library.json still said version 1).
        try TreeRemover.remove(layout.catalog)
        try POSIX.rename(base, layout.catalog)
        if catalog.durable { try POSIX.fsyncDirectory(layout.root) }
        CrashPoint.reached("upgrade-moved")
        try catalog.writeMarker(digits: digits)
        CrashPoint.reached("upgrade-committed")
        try POSIX.unlinkIfPresent(layout.manifestBackup)
    }

    private func symlinkMarker(_ id: String, key: String, base: String) throws {
        let path = "\(base)/pending/\(id)"
        if symlink(key, path) != 0, errno != EEXIST { throw NewsstandError.posix(errno, "cannot create", path: path) }
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
