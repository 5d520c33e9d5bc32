import Foundation
import GRDB
import NewsstandCore

/// The checks behind ``Library/verify(repair:)``, run under the catalog lock.
package final class CatalogVerifier {
    let catalog: Catalog
    package let layout: LibraryLayout
    let repair: Bool
    let options: VerifyOptions
    let names: [String]?
    package var report = VerifyReport()
    /// Asset locks probed on one descriptor (opening the lock file for each asset was 4.5 % of a 100,000-issue run).
    lazy var assetLocks = AssetLock.Probe(layout: layout)

    package init(catalog: Catalog, layout: LibraryLayout, options: VerifyOptions, names: [String]? = nil) {
        self.catalog = catalog
        self.layout = layout
        self.repair = options.repair
        self.options = options
        self.names = names
    }

    package func run() throws -> VerifyReport {
        try checkDatabase()
        let issues = try catalog.allRecords()
        report.issuesChecked = issues.count
        var selected: Set<String>?
        if let names {
            selected = []
            for name in names {
                let key = Catalog.key(for: name)
                guard let issue = issues[key], issue.name == name else {
                    throw NewsstandError.issueNotFound(name, in: layout.root)
                }
                selected?.insert(key)
            }
        }
        try checkColumns(against: issues)
        try checkPending(against: issues)
        try checkFolders(of: issues, selected: selected)
        try checkTemporaries()
        try checkContent(of: issues, selected: selected)
        if selected == nil { checkSharedFolders(of: issues) }
        try checkLeftovers(issues: issues)
        return report
    }

    /// Records a problem that only a person can resolve.
    package func note(_ kind: VerifyReport.Problem.Kind, _ path: String, _ detail: String) {
        report.problems.append(.init(kind: kind, path: path, detail: detail, repaired: false))
    }

    /// Records a problem, fixing it first when repairing (or when `when` says so).
    package func note(
        _ kind: VerifyReport.Problem.Kind, _ path: String, _ detail: String, when: Bool? = nil,
        fix: () throws -> Void
    ) {
        var repaired = false
        if when ?? repair {
            do {
                try fix()
                repaired = true
            } catch {
                report.problems.append(
                    .init(kind: kind, path: path, detail: "\(detail) (repair failed: \(error))", repaired: false))
                return
            }
            CrashPoint.reached("repair-step")
        }
        report.problems.append(.init(kind: kind, path: path, detail: detail, repaired: repaired))
    }

    /// SQLite's own check of the file: pages, b-trees, indexes. A damaged index is rebuilt (`REINDEX`); damage
    /// to the tables themselves is reported for a person (a backup of the library folder restores it).
    private func checkDatabase() throws {
        let found = try catalog.integrityProblems()
        guard !found.isEmpty else { return }
        note(.indexOutOfStep, layout.database, "the database is damaged: \(found.prefix(3).joined(separator: "; "))") {
            try catalog.reindex()
            let left = try catalog.integrityProblems()
            if !left.isEmpty { throw NewsstandError(.manifestUnreadable, "still damaged after REINDEX: \(left[0])") }
        }
    }

    /// Each row's columns (what `list` and the shelf read) must say what its JSON record says: a record edited
    /// by hand (`sqlite3 … json_set`) gets its columns again from the record.
    private func checkColumns(against issues: [String: Issue]) throws {
        let differing = try catalog.keysWithStaleColumns(issues)
        guard !differing.isEmpty else { return }
        note(.indexOutOfStep, layout.database, "\(differing.count) issue(s) list other fields than their records say") {
            try catalog.rewriteRows(differing.compactMap { key in issues[key].map { (key, $0) } })
        }
    }

    private func checkPending(against issues: [String: Issue]) throws {
        for marker in try catalog.pendingMarkers() {
            let asset = issues[marker.key]?.assets.first { $0.id == marker.id }
            guard asset == nil || asset?.isComplete == true else { continue }
            note(.stalePendingDownload, layout.database, "the saved download \(marker.id) points to no unfinished asset") {
                try catalog.writeHoldingLock { $0.clearPending(marker.id) }
            }
        }
    }

    private func checkFolders(of issues: [String: Issue], selected: Set<String>?) throws {
        var owned = Set<String>()
        var expected: [String: String] = [:]  // folder key → issue key
        for key in Self.sortedKeys(issues.keys) {
            guard let issue = issues[key] else { continue }
            // A filed issue's folder may be nested and shared (`Podcast/2026`): its top entry is owned.
            owned.insert(issue.folderName.split(separator: "/").first.map(String.init) ?? issue.folderName)
            let folderKey = Catalog.folderKey(issue.claimName)
            if let other = expected[folderKey], let owner = issues[other] {
                // Two issues that one case-insensitive disk would put in one folder: only a person can choose.
                note(
                    .staleFolderClaim, layout.contentFolder(issue.folderName),
                    "\(issue.name.debugDescription) and \(owner.name.debugDescription) claim the same folder")
            }
            expected[folderKey] = key
            let folder = layout.contentFolder(issue.folderName)
            if issue.isBeingRemoved {
                note(.interruptedRemoval, folder, "the removal of \(issue.name.debugDescription) was cut short") {
                    let outcome = try IssueRemoval(
                        catalog: catalog, layout: layout, purpose: .prune, catalogLocked: true
                    )
                    .remove([issue], markFirst: false)
                    if !outcome.spared.isEmpty {
                        throw NewsstandError(.io, "a download of \(issue.name.debugDescription) is still in flight")
                    }
                }
            } else if selected?.contains(key) ?? true, issue.assets.contains(where: \.isComplete),
                !POSIX.exists(folder) || issue.isFiled && !filedContentExists(issue), !isInFlight(issue)
            {
                note(.missingContent, folder, "the content folder of \(issue.name.debugDescription) is missing") {
                    try requeue(issue, assets: Set(issue.assets.filter(\.isComplete).map(\.id)))
                }
            }
        }
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: layout.root)) ?? []).sorted()
        where !name.hasPrefix(".") && !LibraryLayout.isReserved(name) && !LibraryLayout.isLibraryFile(name)
            && !owned.contains(name)
        {
            noteOrphan(layout.contentFolder(name), "no issue owns \(name.debugDescription)")
        }
    }

    static func sortedKeys(_ keys: some Collection<String>) -> [String] {
        keys.sorted()
    }

    /// Whether every placed file of a filed issue is in its shared folder (that folder may hold others').
    private func filedContentExists(_ issue: Issue) -> Bool {
        let folder = layout.contentFolder(issue.folderName)
        return issue.assets.filter(\.isComplete).compactMap(\.fileName).allSatisfy { POSIX.exists("\(folder)/\($0)") }
    }

    /// Puts the named complete assets of `issue` back to pending, so the next download fetches them again.
    func requeue(_ issue: Issue, assets ids: Set<String>) throws {
        try catalog.writeHoldingLock { changes in
            guard var current = try changes.issue(named: issue.name) else { return }
            for index in current.assets.indices
            where current.assets[index].isComplete && ids.contains(current.assets[index].id) {
                current.assets[index].state = .pending
                current.assets[index].receivedBytes = 0
                current.assets[index].fileName = nil
                current.assets[index].error = nil
                // In the saved list too, so that `resume` fetches it as well as `download`.
                changes.markPending(current.assets[index].id, issueNamed: current.name)
            }
            try changes.put(current)
        }
    }

    private func checkTemporaries() throws {
        let folders = [layout.root, layout.catalog, layout.contentRecords]
        for folder in folders {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            where LibraryLayout.isTemporary(name) {
                let path = "\(folder)/\(name)"
                note(.staleTemporaryFile, path, "a temporary file left by a killed writer") {
                    try POSIX.unlinkIfPresent(path)
                }
            }
        }
        if POSIX.exists(layout.catalogUpgrade) {
            note(.staleTemporaryFile, layout.catalogUpgrade, "an upgrade that never committed") {
                try TreeRemover.remove(layout.catalogUpgrade)
            }
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
