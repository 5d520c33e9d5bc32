import Foundation
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
        if POSIX.exists(layout.intent) {
            note(.interruptedChange, layout.intent, "a change was cut short; its index lines are out of step") {
                try catalog.recover()
            }
        }
        if catalog.depthsNeedSettling(current: try catalog.currentDigits()) {
            // Other depths may hold the only copy of records: merged, never deleted unread. First, so that the
            // checks below read the depth in force.
            note(.bucketDepthMismatch, layout.catalog, "bucket folders of another depth than library.json's") {
                _ = try catalog.mergeDepths()
            }
        }
        let digits = try catalog.currentDigits()
        let (issues, claims) = try catalog.allRecords(digits: digits)
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
        try checkIndex(against: issues)
        try checkPending(against: issues)
        try checkFolders(of: issues, claims: claims, selected: selected)
        try checkTemporaries(digits: digits)
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

    private func checkIndex(against issues: [String: Issue]) throws {
        var differing = 0
        var unreadable: String?
        var indexed: [IssueSummary] = []
        do {
            if let reader = try CatalogIndexReader(path: layout.index) {
                let entries = try reader.liveEntries()
                indexed = entries.map(\.summary)
                // On both cores (the reads are `pread`s of the one descriptor).
                let tallies = try Stripes.map(count: entries.count) { indices in
                    var tally = (differing: 0, listed: 0)
                    var buffer: [UInt8] = []
                    var encoded = JSONWriter(capacity: 4096)
                    for index in indices {
                        let entry = entries[index]
                        guard let issue = issues[entry.key.text] else {
                            tally.differing += 1
                            continue
                        }
                        tally.listed += 1
                        guard entry.summary == IssueSummary(issue) else {
                            tally.differing += 1
                            continue
                        }
                        try reader.recordBytes(entry, into: &buffer)
                        // The index holds the record as the catalog writes it: when its bytes are the record's own
                        // encoding, they say the same (encoding is several times cheaper than decoding them).
                        encoded.removeAll()
                        issue.write(to: &encoded)
                        if encoded.bytes == buffer { continue }
                        let indexed = try? buffer.withUnsafeBufferPointer {
                            try IssueRecord.decode($0, path: reader.path)
                        }
                        if indexed == issue { continue }
                        tally.differing += 1
                    }
                    return tally
                }
                // Issues the index does not list (its live keys are distinct).
                let listed = tallies.reduce(0) { $0 + $1.listed }
                differing += tallies.reduce(0) { $0 + $1.differing } + issues.count - listed
            } else {
                unreadable = "the index is missing"
            }
        } catch let error as NewsstandError {
            unreadable = error.message
        }
        if let unreadable {
            note(.indexOutOfStep, layout.index, unreadable) { try catalog.rebuildIndex() }
        } else if differing > 0 {
            note(.indexOutOfStep, layout.index, "\(differing) issue(s) in the index differ from their records") {
                try catalog.rebuildIndex()
            }
        } else {
            checkSummary(against: indexed)
        }
    }

    /// A summary that `list` would read must say what the index says (`indexed`, as its own reader read it). One
    /// it would not read, such as one of an earlier index, is no problem: `list` reads the index, and the next
    /// change writes a new summary.
    private func checkSummary(against indexed: [IssueSummary]) {
        guard POSIX.exists(layout.summary), let listed = try? catalog.listing(),
            listed.count != indexed.count || Set(listed) != Set(indexed)
        else { return }
        note(.indexOutOfStep, layout.summary, "the summary that `list` reads differs from the index") {
            try catalog.rebuildIndex()
        }
    }

    private func checkPending(against issues: [String: Issue]) throws {
        for marker in try catalog.pendingMarkers() {
            let asset = issues[marker.key]?.assets.first { $0.id == marker.id }
            guard asset == nil || asset?.isComplete == true else { continue }
            let path = layout.pendingMarker(marker.id)
            note(.stalePendingDownload, path, "the saved download \(marker.id) points to no unfinished asset") {
                try catalog.removeMarkers([marker.id])
            }
        }
        for anchor in catalog.strayAnchors() {
            note(.stalePendingDownload, anchor, "the anchor of an issue with no saved download left") {
                try POSIX.unlinkIfPresent(anchor)
            }
        }
    }

    private func checkFolders(of issues: [String: Issue], claims: [String: String], selected: Set<String>?) throws {
        var owned = Set<String>()
        var expected: [String: String] = [:]  // folder key → issue key
        for key in Self.sortedKeys(issues.keys) {
            guard let issue = issues[key] else { continue }
            // A filed issue's folder may be nested and shared (`Podcast/2026`): its top entry is owned.
            owned.insert(issue.folderName.split(separator: "/").first.map(String.init) ?? issue.folderName)
            let folderKey = Catalog.folderKey(issue.claimName)
            expected[folderKey] = key
            if claims[folderKey] != key {
                let folder = issue.folderName
                note(
                    .staleFolderClaim, layout.catalog,
                    "the folder name \(folder.debugDescription) is not claimed by its issue"
                ) {
                    try catalog.writeHoldingLock { $0.setClaim(folderKey, owner: key) }
                }
            }
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
        for folderKey in Self.sortedKeys(claims.keys) {
            guard let owner = claims[folderKey], expected[folderKey] != owner else { continue }
            if expected[folderKey] != nil { continue }  // re-pointed above
            note(.staleFolderClaim, layout.catalog, "a folder name claim (\(folderKey)) that no issue owns") {
                try catalog.writeHoldingLock { $0.setClaim(folderKey, owner: nil) }
            }
        }
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: layout.root)) ?? []).sorted()
        where !name.hasPrefix(".") && !LibraryLayout.isReserved(name) && !LibraryLayout.isLibraryFile(name)
            && !owned.contains(name)
        {
            noteOrphan(layout.contentFolder(name), "no issue owns \(name.debugDescription)")
        }
    }

    /// `keys` in their text's order, compared as the two numbers each key is (32 lowercase hex digits, so the
    /// orders agree): sorting 100,000 (key, issue) pairs by string was most of the folder check.
    static func sortedKeys(_ keys: some Collection<String>) -> [String] {
        var parsed: [(CatalogIndex.Key, String)] = []
        parsed.reserveCapacity(keys.count)
        for key in keys {
            // Every key was checked when its bucket was read; anything else is sorted as text.
            guard let number = CatalogIndex.Key(key) else { return keys.sorted() }
            parsed.append((number, key))
        }
        parsed.sort { a, b in a.0.high != b.0.high ? a.0.high < b.0.high : a.0.low < b.0.low }
        return parsed.map(\.1)
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

    private func checkTemporaries(digits: Int) throws {
        let folders = [
            layout.root, layout.catalog, layout.records(digits: digits), layout.contentRecords, layout.pending,
        ]
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
