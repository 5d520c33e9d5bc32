import Foundation

/// What `verify` found, one entry per problem.
public struct VerifyReport: Sendable {
    /// One thing out of order.
    public struct Problem: Sendable, Hashable {
        /// The kinds of damage `verify` knows.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// A change was cut short by a crash; its index lines are re-derived from the records.
            case interruptedChange
            /// The index does not match the records (missing, extra or different lines): rebuilt.
            case indexOutOfStep
            /// A saved download points to an issue or asset that is gone or complete: dropped.
            case stalePendingDownload
            /// A folder-name claim whose issue is gone, or a live issue without its claim: fixed.
            case staleFolderClaim
            /// A temporary file a killed writer left in the catalog: deleted.
            case staleTemporaryFile
            /// `library.json`'s bucket depth disagrees with the bucket folders on disk (a restored or synced
            /// marker): the records of every depth are merged into one, which `library.json` then names.
            case bucketDepthMismatch
            /// An issue's content folder, or files an asset placed in it, are gone although the issue
            /// says they are there: the assets concerned are queued to be fetched again.
            case missingContent
            /// A file an asset placed changed size (or, with the deep check, its SHA-256): the asset is
            /// queued to be fetched again (a changed plain file is deleted first, so the new copy takes
            /// its name).
            case changedContent
            /// A `remove` (or a prune) was cut short: the repair finishes it.
            case interruptedRemoval
            /// A file of the library's own that nothing uses any more: a partial or finished download,
            /// a resume record or a lock file of no download, a staging folder of no unpack, a content
            /// record of no asset, a folder left in the trash: deleted.
            case staleFile
            /// A folder or file in the library that no issue owns: listed; deleted only with
            /// `removeOrphans`.
            case orphan
            /// A subscription's record cannot be read: listed, never rewritten (it holds the items seen).
            /// `sync` reports it as a failed subscription and refreshes the others; `subscriptions` stops
            /// with an error naming it until it is fixed or removed.
            case damagedSubscription
        }

        public let kind: Kind
        /// The file or folder concerned.
        public let path: String
        /// One line saying what is wrong.
        public let detail: String
        /// Whether `verify --repair` fixed it.
        public internal(set) var repaired: Bool
    }

    public internal(set) var problems: [Problem] = []
    /// Issues whose records were read.
    public internal(set) var issuesChecked = 0
    /// Issues whose content was checked against what their assets placed.
    public internal(set) var contentChecked = 0
    /// Issues whose content was not checked because a download or unpack of theirs is in flight.
    public internal(set) var skippedInFlight: [String] = []

    /// True when nothing is left wrong (everything found was repaired, or nothing was found).
    public var isClean: Bool { problems.allSatisfy(\.repaired) }
}

/// How ``Library/verify(issues:options:)`` checks and what it may change.
public struct VerifyOptions: Sendable, Hashable {
    /// Fix what the library owns: re-derive or rebuild the index, drop stale entries, delete the
    /// library's own stale files, finish interrupted removals, re-queue assets whose content is gone or
    /// changed.
    public var repair: Bool
    /// Delete orphans (files and folders no issue owns): the only way `verify` deletes a file it did
    /// not write. Implies nothing else.
    public var removeOrphans: Bool
    /// Also hash every placed file whose SHA-256 is known, and compare (reads all of them).
    public var deep: Bool

    public init(repair: Bool = false, removeOrphans: Bool = false, deep: Bool = false) {
        self.repair = repair
        self.removeOrphans = removeOrphans
        self.deep = deep
    }
}

extension Library {
    /// Reconciles the catalog with itself and with the disk: interrupted changes, the index against the
    /// records, the saved downloads and folder claims against the issues, stale temporaries, content
    /// folders, orphans. Holds the catalog lock while it runs (a consistent view; writers wait).
    /// - Parameter repair: Fix what the library owns. Orphans are only listed.
    /// - Returns: Every problem found, each marked repaired or not.
    /// - Throws: `.manifestUnreadable` naming a damaged record (records are the source of truth and are
    ///   never rewritten by a repair).
    public func verify(repair: Bool = false) async throws -> VerifyReport {
        try await verify(issues: nil, options: VerifyOptions(repair: repair))
    }

    /// Reconciles the catalog with itself and with the disk (see ``VerifyReport/Problem/Kind``): the
    /// catalog's own structure, every issue's content against what its assets placed (sizes recorded at
    /// placing time; checksums with `deep`), the library's own leftover files, and orphans.
    ///
    /// Holds the catalog lock while it runs (a consistent view; writers wait). Issues with a download or
    /// unpack in flight (in any process) are skipped, never reported or repaired half-way.
    /// - Parameters:
    ///   - names: Only check the content of these issues (the catalog's structure is always checked);
    ///     nil for every issue.
    ///   - options: Whether to repair, delete orphans, hash files.
    /// - Returns: Every problem found, each marked repaired or not.
    /// - Throws: `.issueNotFound` for an unknown name (before anything is changed), `.manifestUnreadable`
    ///   naming a damaged record.
    public func verify(issues names: [String]?, options: VerifyOptions) async throws -> VerifyReport {
        let catalog = self.catalog
        let layout = self.layout
        return try await runBlocking {
            try catalog.withLock {
                let verifier = CatalogVerifier(catalog: catalog, layout: layout, options: options, names: names)
                return try verifier.run()
            }
        }
    }

    /// Resolves a disagreement between `library.json`'s bucket depth and the bucket folders on disk, which
    /// ``open(at:configuration:logger:createIfMissing:)`` refuses: finishes a split its record names, or else
    /// merges the records and claims of every depth into the deepest one and makes `library.json` name it (a key
    /// found twice keeps the line written last). Reads every record; deletes a depth's folder only once its
    /// lines are in the merged depth. What `verify --repair` does before it opens the library.
    ///
    /// Blocking work runs off the caller's executor; holds the library's lock while it runs.
    /// - Parameter url: The library folder (nothing is created when there is none).
    /// - Returns: A line saying what was merged, or nil when nothing disagreed (or there is no library).
    /// - Throws: `.manifestUnreadable` naming a damaged bucket or marker (nothing is changed then), I/O errors.
    public static func repairBucketDepths(at url: URL) async throws -> String? {
        let layout = LibraryLayout(root: url.standardizedFileURL.path)
        let catalog = Catalog(layout: layout, durable: true)
        return try await runBlocking {
            guard POSIX.exists(layout.manifest) else { return nil }
            return try catalog.withLock { () -> String? in
                guard case .current(let digits) = try catalog.readMarker(),
                    catalog.depthsNeedSettling(current: digits)
                else { return nil }
                do {
                    try catalog.settleDepths(current: digits)  // a split its record explains: nothing to merge
                    return nil
                } catch {
                    return try catalog.mergeDepths()
                }
            }
        }
    }
}

/// The checks behind ``Library/verify(repair:)``, run under the catalog lock.
final class CatalogVerifier {
    let catalog: Catalog
    let layout: LibraryLayout
    let repair: Bool
    let options: VerifyOptions
    let names: [String]?
    var report = VerifyReport()

    init(catalog: Catalog, layout: LibraryLayout, options: VerifyOptions, names: [String]? = nil) {
        self.catalog = catalog
        self.layout = layout
        self.repair = options.repair
        self.options = options
        self.names = names
    }

    func run() throws -> VerifyReport {
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
        var issues: [String: Issue] = [:]
        var claims: [String: String] = [:]
        try catalog.forEachBucket(digits: digits) { bucket in
            for (key, issue) in try bucket.issues() { issues[key] = issue }
            for (key, owner) in bucket.claims() { claims[key] = owner }
        }
        report.issuesChecked = issues.count
        var selected: Set<String>?
        if let names {
            selected = []
            for name in names {
                let key = Catalog.key(for: name)
                guard let issue = issues[key], issue.name == name else {
                    throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(layout.root)")
                }
                selected?.insert(key)
            }
        }
        try checkIndex(against: issues)
        try checkPending(against: issues)
        try checkFolders(of: issues, claims: claims, selected: selected)
        try checkTemporaries(digits: digits)
        try checkContent(of: issues, selected: selected)
        try checkLeftovers(issues: issues)
        checkSubscriptions()
        return report
    }

    /// Records a problem that only a person can resolve.
    func note(_ kind: VerifyReport.Problem.Kind, _ path: String, _ detail: String) {
        report.problems.append(.init(kind: kind, path: path, detail: detail, repaired: false))
    }

    /// Records a problem, fixing it first when repairing (or when `when` says so).
    func note(
        _ kind: VerifyReport.Problem.Kind, _ path: String, _ detail: String, when: Bool? = nil,
        fix: () throws -> Void
    ) {
        var repaired = false
        if when ?? repair {
            do {
                try fix()
                repaired = true
            } catch {
                report.problems.append(.init(kind: kind, path: path, detail: "\(detail) (repair failed: \(error))", repaired: false))
                return
            }
            CrashPoint.reached("repair-step")
        }
        report.problems.append(.init(kind: kind, path: path, detail: detail, repaired: repaired))
    }

    private func checkIndex(against issues: [String: Issue]) throws {
        var differing = 0
        var unreadable: String?
        do {
            if let reader = try CatalogIndexReader(path: layout.index) {
                var seen = Set<String>()
                var buffer: [UInt8] = []
                for entry in try reader.liveEntries() {
                    seen.insert(entry.key.text)
                    try reader.recordBytes(entry, into: &buffer)
                    let indexed = try? buffer.withUnsafeBufferPointer { try IssueRecord.decode($0, path: reader.path) }
                    if let issue = issues[entry.key.text], indexed == issue, entry.summary == IssueSummary(issue) {
                        continue
                    }
                    differing += 1
                }
                differing += issues.keys.filter { !seen.contains($0) }.count
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
        for (key, issue) in issues.sorted(by: { $0.key < $1.key }) {
            owned.insert(issue.folderName)
            let folderKey = Catalog.folderKey(issue.folderName)
            expected[folderKey] = key
            if claims[folderKey] != key {
                let folder = issue.folderName
                note(.staleFolderClaim, layout.catalog, "the folder name \(folder.debugDescription) is not claimed by its issue") {
                    try catalog.writeHoldingLock { $0.setClaim(folderKey, owner: key) }
                }
            }
            let folder = layout.contentFolder(issue.folderName)
            if issue.isBeingRemoved {
                note(.interruptedRemoval, folder, "the removal of \(issue.name.debugDescription) was cut short") {
                    let outcome = try IssueRemoval(catalog: catalog, layout: layout, catalogLocked: true)
                        .remove([issue], markFirst: false)
                    if !outcome.spared.isEmpty {
                        throw NewsstandError(.io, "a download of \(issue.name.debugDescription) is still in flight")
                    }
                }
            } else if selected?.contains(key) ?? true, issue.assets.contains(where: \.isComplete),
                !POSIX.exists(folder), !isInFlight(issue)
            {
                note(.missingContent, folder, "the content folder of \(issue.name.debugDescription) is missing") {
                    try requeue(issue, assets: Set(issue.assets.filter(\.isComplete).map(\.id)))
                }
            }
        }
        for (folderKey, owner) in claims.sorted(by: { $0.key < $1.key }) where expected[folderKey] != owner {
            if expected[folderKey] != nil { continue }  // re-pointed above
            note(.staleFolderClaim, layout.catalog, "a folder name claim (\(folderKey)) that no issue owns") {
                try catalog.writeHoldingLock { $0.setClaim(folderKey, owner: nil) }
            }
        }
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: layout.root)) ?? []).sorted()
        where !name.hasPrefix(".") && !LibraryLayout.isReserved(name) && !owned.contains(name) {
            noteOrphan(layout.contentFolder(name), "no issue owns \(name.debugDescription)")
        }
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
        let folders = [layout.root, layout.catalog, layout.records(digits: digits), layout.contentRecords, layout.pending]
        for folder in folders {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            where name.contains(".tmp-") {
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
