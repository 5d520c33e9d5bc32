import Foundation
import NewsstandCore
import NewsstandCatalog

/// The download area's files (`.downloads/<asset>.part`, `.done`, `.resume.json`; see ``LibraryLayout``):
/// discarding one asset's, and sweeping what crashes leave behind.
package enum DownloadArea {
    /// Deletes an asset's partial, completed and resume files, unless another process holds the asset's
    /// lock (then it returns false and leaves everything).
    package static func discardFiles(of id: String, layout: LibraryLayout) throws -> Bool {
        // No lock file means no process has locked an asset here (and perhaps no `.downloads` folder at all).
        var held: AssetLock?
        if POSIX.exists(layout.assetLocks) {
            guard let lock = try AssetLock.try(id, layout: layout) else { return false }
            held = lock
        }
        for path in [
            layout.partialFile(id), layout.completedFile(id), layout.resumeRecord(id), layout.legacyAssetLock(id),
        ] {
            try POSIX.unlinkIfPresent(path)
        }
        withExtendedLifetime(held) {}
        return true
    }

    /// Best-effort clean-up of what crashes leave behind in `.downloads`: the files of assets that are
    /// not in the saved list (complete, or gone: a crash between the last commit and the delete),
    /// skipping any asset another process holds, and catalog temporaries older than ten minutes.
    static func sweep(layout: LibraryLayout, catalog: Catalog) {
        // The folder is listed before the saved list is read: an asset's files are only ever created
        // after its entry, so nothing in flight can look stale.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.downloads),
            let saved = try? Set(catalog.pendingMarkers().map(\.id))
        else { return }
        let own = names.filter { !LibraryLayout.isSharedDownloadFile($0) }
        let ids = Set(own.compactMap { $0.split(separator: ".", maxSplits: 1).first.map(String.init) })
        for id in ids where !saved.contains(id) {
            _ = try? discardFiles(of: id, layout: layout)
        }
        for folder in [layout.root, layout.catalog] {
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in entries
            where LibraryLayout.isTemporary(name, of: "library.json") {
                let path = "\(folder)/\(name)"
                if let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                    date.timeIntervalSinceNow < -600
                {
                    try? POSIX.unlinkIfPresent(path)
                }
            }
        }
    }
}
