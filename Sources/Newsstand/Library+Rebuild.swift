import Foundation
import NewsstandCatalog
import NewsstandCore
import NewsstandReports

/// Rebuilding a lost or damaged catalog from the issues' `issue.json` manifests, as Calibre restores
/// `metadata.db` from its OPF files: what `verify --repair` does before it opens the library, which refuses such a
/// catalog.
extension Library {
    /// When the catalog's database is missing or damaged past what `REINDEX` mends, moves it aside
    /// (`.catalog/catalog.sqlite.damaged-TIME`) and builds a new one from every `issue.json` (and filed issues'
    /// `NAME.issue.json`) in the library: each issue with its name, date, publication, feed item and files, and
    /// its unfinished downloads queued again. What the manifests do not hold is gone: issues never downloaded (they
    /// have no folder yet), request headers, the event log (hooks go on after their positions), asset identifiers.
    ///
    /// Blocking work runs off the caller's executor; holds the library's lock while it runs.
    /// - Parameter url: The library folder (nothing is created when there is none).
    /// - Returns: One line saying what was rebuilt, or nil when the catalog was sound (or there is no library).
    public static func rebuildDamagedCatalog(at url: URL) async throws -> String? {
        let layout = LibraryLayout(root: url.standardizedFileURL.path)
        return try await runBlocking { () throws -> String? in
            guard POSIX.exists(layout.manifest) else { return nil }
            return try Catalog(layout: layout).withLock { () throws -> String? in
                // A value of its own for the check: its pool closes with it, before the file is moved aside.
                guard let damage = Catalog(layout: layout).databaseDamage() else { return nil }
                let (issues, refused) = sidecarIssues(layout)
                let kept = try Catalog(layout: layout).rebuild(from: issues)
                return "\(damage); rebuilt from \(issues.count) issue.json manifest(s)"
                    + (refused > 0 ? " (\(refused) unreadable or repeated, left out)" : "")
                    + (kept.map { "; the old file was kept as \($0)" } ?? "")
            }
        }
    }

    /// Every issue a sidecar in the library describes (hidden folders and the library's own files skipped), and
    /// how many sidecars could not be read or named an issue already found.
    static func sidecarIssues(_ layout: LibraryLayout) -> (issues: [Issue], refused: Int) {
        var issues: [Issue] = []
        var names = Set<String>()
        var refused = 0
        let root = URL(fileURLWithPath: layout.root, isDirectory: true)
        guard
            let walk = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return ([], 0) }
        for case let file as URL in walk {
            let name = file.lastPathComponent
            guard name == IssueSidecar.fileName || name.hasSuffix("." + IssueSidecar.fileName) else { continue }
            let relative = file.path.dropFirst(layout.root.count + 1)
            let folder = (String(relative) as NSString).deletingLastPathComponent
            guard !folder.isEmpty, let data = try? AtomicFile.read(file.path),
                let sidecar = try? JSONDecoder().decode(IssueSidecar.self, from: data)
            else { continue }  // not the library's (an archive's own issue.json), or unreadable
            let stem = name == IssueSidecar.fileName ? nil : String(name.dropLast(IssueSidecar.fileName.count + 1))
            guard let issue = issue(from: sidecar, folder: folder, stem: stem), names.insert(issue.name).inserted else {
                refused += 1
                continue
            }
            issues.append(issue)
        }
        return (issues, refused)
    }

    /// The issue a sidecar describes, checked as a stored record is (a hostile manifest gets no unsafe folder).
    static func issue(from sidecar: IssueSidecar, folder: String, stem: String?) -> Issue? {
        guard let date = IssueDate(sidecar.date) else { return nil }
        var issue = Issue(name: sidecar.name, date: date, folderName: folder, fileStem: stem)
        if sidecar.publication != issue.publicationName { issue.publication = sidecar.publication }
        if let subscription = sidecar.subscription, let item = sidecar.item {
            issue.origin = Issue.Origin(subscriptionID: subscription.id, itemID: item.guid)
            issue.source = Issue.SourceItem(title: item.title, link: item.link, description: item.description)
        }
        for entry in sidecar.assets {
            guard let url = URL(string: entry.url) else { return nil }
            var asset = AssetDownload(id: newAssetID(), url: url, sha256: entry.sha256)
            let state = AssetDownload.State(rawValue: entry.state) ?? .pending
            // A download in flight when the catalog was lost starts again.
            asset.state = state == .downloading ? .pending : state
            asset.fileName = entry.file
            if asset.state == .downloaded || asset.state == .unpacked {
                asset.receivedBytes = entry.size
                asset.expectedBytes = entry.size
            }
            asset.role = entry.role.flatMap(AssetDownload.Role.init(rawValue:)) ?? .content
            issue.assets.append(asset)
        }
        issue.updateStatus()
        // Through the record's own checks: what a stored record may not hold, a manifest may not bring.
        let record = IssueRecord.encode(issue)
        return try? record.withUnsafeBufferPointer { try IssueRecord.decode($0, path: "issue.json") }
    }
}
