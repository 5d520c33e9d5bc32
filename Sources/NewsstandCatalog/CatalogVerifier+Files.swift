import Foundation
import NewsstandCore

/// `verify`'s check of the library's own working files: what a killed download, unpack or removal
/// left behind. A file whose download or unpack is in flight (its lock held, in any process) is never
/// touched.
extension CatalogVerifier {
    func checkLeftovers(issues: [String: Issue]) throws {
        // Every asset by id and every issue's lock name, built on first use: a library usually has no
        // leftovers at all, and at 100,000 issues building them was an eighth of `verify`.
        var built: Tables?
        func tables() -> Tables {
            if let built { return built }
            var tables = Tables()
            for issue in issues.values {
                tables.folders.insert(issue.lockName)
                for asset in issue.assets { tables.assets[asset.id] = (issue, asset) }
            }
            built = tables
            return tables
        }
        let pending = Set(try catalog.pendingMarkers().map(\.id))
        /// Whether the files of download `id` still serve a download that `resume` will continue.
        func isLive(_ id: String) -> Bool {
            guard pending.contains(id), let owner = tables().assets[id] else { return false }
            return !owner.asset.isComplete && !owner.issue.isBeingRemoved
        }

        for name in Self.names(in: layout.downloads) where !LibraryLayout.isSharedDownloadFile(name) {
            let id = String(name.prefix { $0 != "." })
            if AssetLock.isHeld(id, layout: layout) || isLive(id) { continue }
            let path = "\(layout.downloads)/\(name)"
            let owner = Self.describe(id, tables().assets)
            note(.staleFile, path, "a download file that no download will use (\(owner))") {
                try POSIX.unlinkIfPresent(path)
            }
        }
        for name in Self.names(in: layout.staging) {
            let path = "\(layout.staging)/\(name)"
            if name.hasSuffix(".lock") {
                let folder = String(name.dropLast(5))
                if tables().folders.contains(folder) || FileLock.isHeld(path: path) { continue }
                note(.staleFile, path, "the lock file of a folder no issue has") { try POSIX.unlinkIfPresent(path) }
            } else {
                if AssetLock.isHeld(name, layout: layout) { continue }
                note(
                    .staleFile, path,
                    "the staging folder of an unpack that was cut short (\(Self.describe(name, tables().assets)))"
                ) {
                    try TreeRemover.remove(path)
                }
            }
        }
        // Only while no removal is live (in any process): a live one's folders are its own to delete.
        try Trash.whenIdle(layout) { entries in
            for path in entries {
                note(.staleFile, path, "the folder of a removed issue, left in the trash by a removal that was cut short") {
                    try TreeRemover.remove(path)
                }
            }
        }
        for name in Self.names(in: layout.contentRecords) where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let id = String(name.dropLast(5))
            guard tables().assets[id] == nil else { continue }
            let path = layout.contentRecord(id)
            note(.staleFile, path, "the content record of an asset that is gone") { try POSIX.unlinkIfPresent(path) }
        }
    }

    private struct Tables {
        var assets: [String: (issue: Issue, asset: AssetDownload)] = [:]
        var folders: Set<String> = []
    }

    private static func names(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    private static func describe(_ id: String, _ assets: [String: (issue: Issue, asset: AssetDownload)]) -> String {
        guard let owner = assets[id] else { return "asset \(id), which no issue has" }
        return "asset \(id) of \(owner.issue.name.debugDescription) (\(owner.asset.state.rawValue))"
    }
}
