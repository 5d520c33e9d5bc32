internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Crypto
import Foundation
import NewsstandCore
import NewsstandArchive

#if canImport(Glibc)
    import Glibc
#endif

/// `verify`'s checks of each issue's content against what its assets placed: plain files by the
/// name, size and checksum in the issue's record; unpacked archives by their content records
/// (`.catalog/content/ID.json`, sizes recorded at placing time); files no asset placed are orphans.
extension CatalogVerifier {
    /// Whether a download or unpack of `issue` is in flight in any process (its locks are held).
    func isInFlight(_ issue: Issue) -> Bool {
        FileLock.isHeld(path: layout.issueLock(issue.lockName))
            || issue.assets.contains { assetLocks.isHeld($0.id) }
    }

    /// Lists an orphan; deletes it when asked to remove orphans.
    func noteOrphan(_ path: String, _ detail: String) {
        if options.removeOrphans {
            note(.orphan, path, detail + " (removed)", when: true) { try TreeRemover.remove(path) }
        } else {
            note(.orphan, path, detail + " (left as it is; --remove-orphans deletes it)")
        }
    }

    func checkContent(of issues: [String: Issue], selected: Set<String>?) throws {
        for (key, issue) in issues.sorted(by: { $0.value.name < $1.value.name }) {
            guard selected?.contains(key) ?? true, !issue.isBeingRemoved else { continue }
            if !issue.assets.isEmpty, isInFlight(issue) {
                report.skippedInFlight.append(issue.name)
                continue
            }
            let folder = layout.contentFolder(issue.folderName)
            guard POSIX.exists(folder) else { continue }  // a missing folder is checkFolders' report
            report.contentChecked += 1
            try checkContent(of: issue, in: folder)
        }
    }

    private func checkContent(of issue: Issue, in folder: String) throws {
        // Paths (relative to the folder) that the library put there, for the orphan walk.
        // The sidecar and the cover files are the library's (LibraryLayout.issueFiles), not orphans.
        var owned: Set<String> = LibraryLayout.issueFiles
        var everyPlacementKnown = true
        for asset in issue.assets {
            if let name = asset.fileName { owned.insert(name) }
            let record: ContentRecord?
            do {
                record = try ContentRecord.read(assetID: asset.id, layout: layout)
            } catch let error as NewsstandError {
                // Only verify reads it, and only sizes are lost with it: reported, and deleted by a repair.
                let path = layout.contentRecord(asset.id)
                note(.staleFile, path, error.message) { try POSIX.unlinkIfPresent(path) }
                record = nil
            }
            if let record {
                for entry in record.entries { owned.insert(entry.path) }
            } else if asset.state == .unpacked {
                everyPlacementKnown = false  // unpacked before content records existed
            }
            guard asset.isComplete else { continue }
            let (missing, changed, changedPlainFile) = compare(asset, record: record, in: folder)
            let what = "asset \(asset.id) of \(issue.name.debugDescription)"
            if !missing.isEmpty {
                note(
                    .missingContent, "\(folder)/\(missing[0])",
                    "\(what): \(Self.count(missing.count, "file")) missing (\(Self.first3(missing, ", ")))"
                ) {
                    try requeue(issue, assets: [asset.id])
                }
            } else if !changed.isEmpty {
                note(
                    .changedContent, changedPlainFile ?? folder,
                    "\(what): \(Self.count(changed.count, "file")) changed (\(Self.first3(changed, "; ")))"
                ) {
                    // A plain file is placed under a new name if its old one is taken: the copy the
                    // library placed and that no longer matches goes first.
                    if let changedPlainFile { try POSIX.unlinkIfPresent(changedPlainFile) }
                    try requeue(issue, assets: [asset.id])
                }
            }
        }
        // A filed issue shares its folder: the other issues' files there are not its orphans.
        guard everyPlacementKnown, !issue.isFiled else { return }
        noteOrphans(in: folder, owned: owned, of: issue)
    }

    /// A complete asset's files against what the catalog says: the ones missing, the ones changed (size, or
    /// with `--deep` the SHA-256 of a plain file), and the plain file that changed (a repair deletes it).
    private func compare(
        _ asset: AssetDownload, record: ContentRecord?, in folder: String
    ) -> (missing: [String], changed: [String], changedPlainFile: String?) {
        var missing: [String] = []
        var changed: [String] = []
        var changedPlainFile: String?
        if let name = asset.fileName {
            let path = "\(folder)/\(name)"
            if let size = POSIX.fileSize(path) {
                if size != asset.receivedBytes {
                    changed.append("\(name) is \(size) bytes, not \(asset.receivedBytes)")
                    changedPlainFile = path
                } else if options.deep, let expected = asset.sha256, let digest = FileDigest.sha256(of: path),
                    digest != expected.lowercased()
                {
                    changed.append("\(name) has SHA-256 \(digest), not \(expected)")
                    changedPlainFile = path
                }
            } else {
                missing.append(name)
            }
        }
        if asset.state == .unpacked, let record {
            for entry in record.entries {
                var info = stat()
                guard lstat("\(folder)/\(entry.path)", &info) == 0 else {
                    missing.append(entry.path)
                    continue
                }
                if let size = entry.size, info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) != size {
                    changed.append("\(entry.path) is \(info.st_size) bytes, not \(size)")
                }
            }
        }
        return (missing, changed, changedPlainFile)
    }

    /// Reports what is in an issue's folder that none of its assets placed (one report per orphan folder).
    private func noteOrphans(in folder: String, owned: Set<String>, of issue: Issue) {
        // Folders that hold something the library placed are the library's too.
        var parents: Set<String> = []
        for path in owned {
            var current = Substring(path)
            while let slash = current.lastIndex(of: "/") {
                current = current[..<slash]
                if !parents.insert(String(current)).inserted { break }
            }
        }
        var orphanFolders: [String] = []
        for path in Self.walk(folder) where !owned.contains(path) && !parents.contains(path) {
            // Inside an orphan folder already reported: that report covers it.
            if orphanFolders.contains(where: { path.hasPrefix($0 + "/") }) { continue }
            orphanFolders.append(path)
            noteOrphan(
                "\(folder)/\(path)", "no asset of \(issue.name.debugDescription) placed \(path.debugDescription)")
        }
    }

    /// Every object below `root`, as relative paths, parents before children; a folder whose
    /// contents are all listed is listed too. Symbolic links are not followed.
    static func walk(_ root: String) -> [String] {
        var result: [String] = []
        var queue: [String] = [""]
        while let relative = queue.popLast() {
            let full = relative.isEmpty ? root : "\(root)/\(relative)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: full) else { continue }
            for name in names.sorted() {
                let child = relative.isEmpty ? name : "\(relative)/\(name)"
                result.append(child)
                var info = stat()
                if lstat("\(root)/\(child)", &info) == 0, info.st_mode & S_IFMT == S_IFDIR { queue.append(child) }
            }
        }
        return result
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// The first three items, and an ellipsis when there are more.
    static func first3(_ items: [String], _ separator: String) -> String {
        items.prefix(3).joined(separator: separator) + (items.count > 3 ? separator + "…" : "")
    }
}
