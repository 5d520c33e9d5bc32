import Foundation
import NewsstandCatalog
import NewsstandCore
import NewsstandDownload

/// `prune`: removing issues by policy, never a pinned one or one in flight, crash-safely.
extension Library {
    /// Removes the issues `policy` picks (see ``PrunePolicy``), or with `dryRun` only says which.
    ///
    /// The plan reads every issue in scope (from the index's copies of the records) and measures what
    /// each takes on disk. A real run then removes the picked issues in batches, in the order
    /// ``removeIssue(named:)`` uses, so that a crash at any instant leaves each issue either whole, gone,
    /// or listed as being removed (which `verify --repair` or `remove` finishes): it takes each issue's
    /// lock and its assets' download locks without waiting (an issue whose lock another process holds is
    /// in flight and spared), marks the batch as being removed in one catalog change, moves their content
    /// folders into the library's trash and deletes their records in a second, then deletes their
    /// download files and empties the trash. The bytes each removal frees are measured under those
    /// locks, just before the folder goes.
    /// - Parameters:
    ///   - policy: The rules; an empty policy removes nothing.
    ///   - dryRun: Only report; nothing on disk changes (no lock file is even created).
    /// - Returns: What was removed (or would be) and the bytes freed; what was spared and why.
    /// - Throws: Catalog errors (a damaged record or index), I/O errors. Issues removed before the error
    ///   stay removed; the rest stay whole.
    public func prune(_ policy: PrunePolicy, dryRun: Bool = false) async throws -> PruneReport {
        let catalog = self.catalog
        let layout = self.layout
        let plan = try await runBlocking { try PrunePlanner(catalog: catalog, layout: layout, policy: policy).plan() }
        var planned = plan.report
        planned.dryRun = dryRun
        guard !dryRun, !plan.victims.isEmpty else { return planned }
        let report = planned
        // This process's own downloads of these issues hold their asset locks, so they are spared below.
        return try await runBlocking {
            var done = report
            done.removed = []
            var removedByName: [String: PruneReport.Removal] = [:]
            for removal in report.removed { removedByName[removal.name] = removal }
            for start in stride(from: 0, to: plan.victims.count, by: IssueRemoval.batchSize) {
                let batch = Array(plan.victims[start..<min(start + IssueRemoval.batchSize, plan.victims.count)])
                let outcome = try IssueRemoval(catalog: catalog, layout: layout, purpose: .prune).remove(
                    batch, markFirst: true)
                for (issue, bytes) in outcome.removed {
                    guard let planned = removedByName[issue.name] else { continue }
                    done.removed.append(
                        .init(
                            name: planned.name, date: planned.date, group: planned.group, bytes: bytes,
                            reasons: planned.reasons, origin: issue.origin))
                }
                for (issue, protection) in outcome.spared {
                    done.spared.append(
                        .init(
                            name: issue.name, date: issue.date, protection: protection,
                            reasons: removedByName[issue.name]?.reasons ?? []))
                }
            }
            return done
        }
    }
}

/// Picks the issues a ``PrunePolicy`` removes. Blocking; reads, never writes.
struct PrunePlanner {
    let catalog: Catalog
    let layout: LibraryLayout
    let policy: PrunePolicy

    struct Plan {
        var report: PruneReport
        /// The issues to remove, oldest first.
        var victims: [Issue]
    }

    private struct Candidate {
        var issue: Issue
        var group: String
        var bytes: Int64
        var reasons: [PruneReport.Reason] = []
    }

    func plan() throws -> Plan {
        var candidates: [Candidate] = []
        let leftovers = DownloadLeftovers(layout: layout)
        let assetLocks = AssetLock.Probe(layout: layout)
        try catalog.forEachRecord(live: true) { key, record in
            let issue = try IssueRecord.decode(record, path: catalog.recordPath(key))
            if let id = policy.subscriptionID, issue.origin?.subscriptionID != id { return }
            candidates.append(
                Candidate(
                    issue: issue, group: PrunePlanner.group(of: issue),
                    bytes: leftovers.bytesOnDisk(of: issue)))
        }
        // Oldest first (then by name) throughout: the order of `maxBytes` and of the report.
        candidates.sort { a, b in
            a.issue.date != b.issue.date ? a.issue.date < b.issue.date : a.issue.name < b.issue.name
        }
        if let keep = policy.keep {
            var byGroup: [String: [Int]] = [:]
            for index in candidates.indices { byGroup[candidates[index].group, default: []].append(index) }
            for indices in byGroup.values {
                // Newest first: everything past the first `keep` goes.
                for index in indices.reversed().dropFirst(max(keep, 0)) { candidates[index].reasons.append(.keep) }
            }
        }
        if let days = policy.olderThanDays {
            let cutoff = policy.today.dayNumber - max(days, 0)
            for index in candidates.indices where candidates[index].issue.date.dayNumber < cutoff {
                candidates[index].reasons.append(.olderThan)
            }
        }
        var report = PruneReport(dryRun: true)
        report.bytesBefore = candidates.reduce(Int64(0)) { $0.saturatingAdd($1.bytes) }
        var removed = Set<Int>()
        var spared = Set<Int>()
        func consider(_ index: Int) -> Bool {
            if let protection = protection(of: candidates[index].issue, leftovers: leftovers, assetLocks: assetLocks) {
                spared.insert(index)
                report.spared.append(
                    .init(
                        name: candidates[index].issue.name, date: candidates[index].issue.date, protection: protection,
                        reasons: candidates[index].reasons))
                return false
            }
            removed.insert(index)
            return true
        }
        for index in candidates.indices where !candidates[index].reasons.isEmpty { _ = consider(index) }
        if let budget = policy.maxBytes {
            var total = report.bytesBefore
            for index in removed { total -= candidates[index].bytes }
            for index in candidates.indices where total > budget && !removed.contains(index) {
                if spared.contains(index) { continue }
                candidates[index].reasons.append(.maxBytes)
                if consider(index) { total -= candidates[index].bytes }
            }
            report.overBudget = total > budget
        }
        let order = removed.sorted()
        report.removed = order.map { index in
            let candidate = candidates[index]
            return .init(
                name: candidate.issue.name, date: candidate.issue.date, group: candidate.group,
                bytes: candidate.bytes, reasons: candidate.reasons, origin: candidate.issue.origin)
        }
        return Plan(report: report, victims: order.map { candidates[$0].issue })
    }

    /// `subscription ID` for a subscribed issue, else its publication's name.
    static func group(of issue: Issue) -> String {
        if let origin = issue.origin { return "subscription \(origin.subscriptionID)" }
        return issue.publicationName
    }

    /// Why `issue` may not go, probed without creating or keeping any lock: an issue's lock file only where
    /// the listing of `.staging` holds one, assets' locks on one descriptor.
    func protection(
        of issue: Issue, leftovers: DownloadLeftovers, assetLocks: AssetLock.Probe
    ) -> PruneReport.Protection? {
        if issue.isPinned { return .pinned }
        let issueLock = layout.issueLock(issue.lockName)
        if leftovers.mayExistInStaging(issueLock), FileLock.isHeld(path: issueLock) { return .inFlight }
        for asset in issue.assets where assetLocks.isHeld(asset.id) { return .inFlight }
        return nil
    }
}

/// ``IssueRemoval/bytesOnDisk(of:layout:)`` for a plan over many issues: the download and unpacking folders
/// are listed once, and of each asset's possible files (partial, completed, resume record, staging folder)
/// only those listed are measured. Most issues of a large library have none, and four `lstat`s per asset that
/// found nothing were a fifth of a 100,000-issue plan. A folder that cannot be listed is measured path by path,
/// as before. A file that appears after the listing is missed by the plan's figures only: a real run measures
/// each issue again under its locks before it goes.
struct DownloadLeftovers {
    let layout: LibraryLayout
    /// The paths found in `.downloads` and `.staging`; nil when that folder could not be listed.
    private let downloads: Set<String>?
    private let staging: Set<String>?

    init(layout: LibraryLayout) {
        self.layout = layout
        downloads = DownloadLeftovers.paths(in: layout.downloads)
        staging = DownloadLeftovers.paths(in: layout.staging)
    }

    /// The full paths of the entries of `folder`: empty when it does not exist, nil when it cannot be read.
    private static func paths(in folder: String) -> Set<String>? {
        guard POSIX.exists(folder) else { return [] }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        return Set(names.map { "\(folder)/\($0)" })
    }

    /// Whether `path` (a child of `.staging`) was listed, or `.staging` could not be listed.
    func mayExistInStaging(_ path: String) -> Bool { staging?.contains(path) ?? true }

    func bytesOnDisk(of issue: Issue) -> Int64 {
        var paths = IssueContent.paths(of: issue, layout: layout)
        for asset in issue.assets {
            for path in [layout.partialFile(asset.id), layout.completedFile(asset.id), layout.resumeRecord(asset.id)]
            where downloads?.contains(path) ?? true {
                paths.append(path)
            }
            let folder = layout.stagingFolder(asset.id)
            if staging?.contains(folder) ?? true { paths.append(folder) }
        }
        return DiskUsage.bytes(of: paths)
    }
}

extension IssueDate {
    /// Days since 1970-01-01 (proleptic Gregorian), for counting ages.
    var dayNumber: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
