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
            /// An issue's content folder is gone although assets were placed in it: they are queued to
            /// be fetched again.
            case missingContent
            /// A `remove` was cut short: run `issues remove` on the issue to finish it.
            case interruptedRemoval
            /// A folder or file in the library that no issue owns: listed, never deleted.
            case orphan
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

    /// True when nothing is left wrong (everything found was repaired, or nothing was found).
    public var isClean: Bool { problems.allSatisfy(\.repaired) }
}

extension Library {
    /// Reconciles the catalog with itself and with the disk: interrupted changes, the index against the
    /// records, the saved downloads and folder claims against the issues, stale temporaries, content
    /// folders, orphans. Holds the catalog lock while it runs (a consistent view; writers wait).
    /// - Parameter repair: Fix what the library owns: re-derive or rebuild the index, drop stale
    ///   entries and temporaries, recreate missing folders. Orphans are only listed.
    /// - Returns: Every problem found, each marked repaired or not.
    /// - Throws: `.manifestUnreadable` naming a damaged record (records are the source of truth and are
    ///   never rewritten by a repair).
    public func verify(repair: Bool = false) async throws -> VerifyReport {
        let catalog = self.catalog
        let layout = self.layout
        return try await runBlocking {
            try catalog.withLock {
                let verifier = CatalogVerifier(catalog: catalog, layout: layout, repair: repair)
                return try verifier.run()
            }
        }
    }
}

/// The checks behind ``Library/verify(repair:)``, run under the catalog lock.
final class CatalogVerifier {
    let catalog: Catalog
    let layout: LibraryLayout
    let repair: Bool
    var report = VerifyReport()

    init(catalog: Catalog, layout: LibraryLayout, repair: Bool) {
        self.catalog = catalog
        self.layout = layout
        self.repair = repair
    }

    func run() throws -> VerifyReport {
        if POSIX.exists(layout.intent) {
            note(.interruptedChange, layout.intent, "a change was cut short; its index lines are out of step") {
                try catalog.recover()
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
        try checkIndex(against: issues)
        try checkPending(against: issues)
        try checkFolders(of: issues, claims: claims)
        try checkTemporaries(digits: digits)
        return report
    }

    /// Records a problem that only a person can resolve.
    private func note(_ kind: VerifyReport.Problem.Kind, _ path: String, _ detail: String) {
        report.problems.append(.init(kind: kind, path: path, detail: detail, repaired: false))
    }

    /// Records a problem, fixing it first when repairing.
    private func note(
        _ kind: VerifyReport.Problem.Kind, _ path: String, _ detail: String, fix: () throws -> Void
    ) {
        var repaired = false
        if repair {
            do {
                try fix()
                repaired = true
            } catch {
                report.problems.append(.init(kind: kind, path: path, detail: "\(detail) (repair failed: \(error))", repaired: false))
                return
            }
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
                try POSIX.unlinkIfPresent(path)
            }
        }
    }

    private func checkFolders(of issues: [String: Issue], claims: [String: String]) throws {
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
                note(.interruptedRemoval, folder, "the removal of \(issue.name.debugDescription) was cut short; run `issues remove` on it")
            } else if issue.assets.contains(where: \.isComplete), !POSIX.exists(folder) {
                note(.missingContent, folder, "the content folder of \(issue.name.debugDescription) is missing") {
                    try requeue(issue)
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
            note(.orphan, layout.contentFolder(name), "no issue owns \(name.debugDescription) (left as it is)")
        }
    }

    /// Puts every complete asset of `issue` back to pending, so the next download fetches it again.
    private func requeue(_ issue: Issue) throws {
        try catalog.writeHoldingLock { changes in
            guard var current = try changes.issue(named: issue.name) else { return }
            for index in current.assets.indices where current.assets[index].isComplete {
                current.assets[index].state = .pending
                current.assets[index].receivedBytes = 0
                current.assets[index].fileName = nil
                current.assets[index].error = nil
            }
            try changes.put(current)
        }
    }

    private func checkTemporaries(digits: Int) throws {
        let folders = [layout.root, layout.catalog, layout.records(digits: digits)]
        for folder in folders {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            where name.contains(".tmp-") {
                let path = "\(folder)/\(name)"
                note(.staleTemporaryFile, path, "a temporary file left by a killed writer") {
                    try POSIX.unlinkIfPresent(path)
                }
            }
        }
        for folder in catalog.staleBucketFolders(current: digits) {
            note(.staleTemporaryFile, folder, "bucket folders of a split that was cut short") {
                try TreeRemover.remove(folder)
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
