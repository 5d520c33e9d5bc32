import NewsstandCore

/// The one removal of issues: `remove`, `unsubscribe --remove-issues`, `prune` and `verify --repair` (which
/// finishes removals a crash cut short) all come here. Blocking.
///
/// 1. Each issue's lock is taken, and with it its assets' download locks: an explicit removal waits for the
///    issue's lock (its own process cancelled its downloads first); `prune` takes it only if it is free and
///    spares an issue in flight. Holding them, no download or unpack can start on these issues and nothing
///    can be placed into their folders.
/// 2. One catalog change marks them as being removed (still listed: a crash from here on leaves them
///    for `verify --repair` or `remove` to finish). A record that became pinned meanwhile is spared by `prune`.
/// 3. What each takes on disk is measured: the exact bytes its removal frees.
/// 4. A second change moves their content folders into `.trash/` (one rename each, inside the change),
///    deletes their lock files, download files, staging folders and content records (all held, so no one
///    else's) and then their records and saved downloads, so a folder name is never free on disk while a
///    record still claims it, and a kill after the commit leaves nothing of an issue that is gone (a lock
///    file taken later, by a download that then finds the issue being removed or gone, is deleted by that
///    download).
/// 5. The trash is emptied (what a crash leaves there, the next command sweeps).
package struct IssueRemoval {
    /// Issues per batch: each holds two descriptors (its folder's lock, its assets' locks) until its batch is done.
    package static let batchSize = 128

    /// Who removes, which decides how locks held elsewhere are met. Its raw value is the `issue.removed`
    /// events' reason and names the crash points (`remove-trashed`, `prune-deleted`, …).
    package enum Purpose: String, Sendable {
        /// `remove` and `unsubscribe --remove-issues`: waits for the issue's lock; an asset whose download
        /// lock another process holds keeps its download files, which that process deletes when it sees
        /// the issue gone (`DownloadRun`).
        case remove
        /// `prune` and `verify --repair`: an issue whose lock or any of whose assets' locks is held is
        /// in flight and spared, and so is one pinned meanwhile.
        case prune
    }

    let catalog: Catalog
    let layout: LibraryLayout
    let purpose: Purpose
    /// Whether the caller already holds the catalog lock (`verify --repair`).
    let catalogLocked: Bool

    package struct Outcome {
        package var removed: [(issue: Issue, bytes: Int64)] = []
        package var spared: [(issue: Issue, protection: PruneReport.Protection)] = []
    }

    package init(catalog: Catalog, layout: LibraryLayout, purpose: Purpose, catalogLocked: Bool = false) {
        self.catalog = catalog
        self.layout = layout
        self.purpose = purpose
        self.catalogLocked = catalogLocked
    }

    /// What `issue` takes on disk: its content folder, its assets' partial, finished and resume files,
    /// and their staging folders (all of which its removal deletes).
    package static func bytesOnDisk(of issue: Issue, layout: LibraryLayout) -> Int64 {
        var paths = IssueContent.paths(of: issue, layout: layout)
        for asset in issue.assets {
            paths += [
                layout.partialFile(asset.id), layout.completedFile(asset.id), layout.resumeRecord(asset.id),
                layout.stagingFolder(asset.id),
            ]
        }
        return DiskUsage.bytes(of: paths)
    }

    private enum Step { case marked, trashed, deleted }

    /// The crash points of the tests that kill a removal between its steps (their names are static strings).
    private func reached(_ step: Step) {
        switch (purpose, step) {
        case (.remove, .marked): CrashPoint.reached("remove-marked")
        case (.remove, .trashed): CrashPoint.reached("remove-trashed")
        case (.remove, .deleted): CrashPoint.reached("remove-deleted")
        case (.prune, .marked): CrashPoint.reached("prune-marked")
        case (.prune, .trashed): CrashPoint.reached("prune-trashed")
        case (.prune, .deleted): CrashPoint.reached("prune-deleted")
        }
    }

    private func write<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        catalogLocked ? try catalog.writeHoldingLock(body) : try catalog.write(body)
    }

    /// The locks of one issue and its assets, or nil when `prune` must spare it.
    private func lock(_ issue: Issue) throws -> (FileLock, AssetLock?)? {
        switch purpose {
        case .remove:
            // Each asset's lock is tried when its files are deleted (``deleteFiles(of:)``).
            return (try FileLock(path: layout.issueLock(issue.lockName)), nil)
        case .prune:
            guard let issueLock = try FileLock.try(path: layout.issueLock(issue.lockName)),
                // Every asset's lock on one descriptor: an issue costs two, however many assets it has.
                let held = try AssetLock.try(all: issue.assets.map(\.id), layout: layout)
            else { return nil }
            return (issueLock, held)
        }
    }

    /// Deletes an asset's download files, content record and staging folder. `prune` holds every asset's
    /// lock already; `remove` tries it here and leaves the files of an asset held elsewhere to its holder
    /// (deleting the staging folder under an extraction failed it half-way).
    private func deleteFiles(of asset: AssetDownload) throws {
        var held: AssetLock?
        // No lock file means no process has ever locked an asset here.
        if purpose == .remove, POSIX.exists(layout.assetLocks) {
            guard let lock = try AssetLock.try(asset.id, layout: layout) else { return }
            held = lock
        }
        defer { withExtendedLifetime(held) {} }
        for path in [
            layout.partialFile(asset.id), layout.completedFile(asset.id), layout.resumeRecord(asset.id),
            layout.contentRecord(asset.id), layout.legacyAssetLock(asset.id),
        ] {
            try POSIX.unlinkIfPresent(path)
        }
        try TreeRemover.remove(layout.stagingFolder(asset.id))
    }

    /// Removes `issues`.
    /// - Parameter markFirst: Mark them as being removed first (prune). Without it only issues already
    ///   marked are removed (a removal its caller marked, or one a crash cut short); the others are left alone.
    package func remove(_ issues: [Issue], markFirst: Bool) throws -> Outcome {
        var outcome = Outcome()
        try POSIX.makeDirectory(layout.downloads)
        try POSIX.makeDirectory(layout.staging)
        // Held until the folders renamed into the trash are deleted: no sweep deletes them under us.
        let trash = try Trash.hold(layout)
        defer { withExtendedLifetime(trash) {} }
        var locks: [(FileLock, AssetLock?)] = []
        var lockedNames: [String] = []
        var lockedFolders: [String: String] = [:]  // name → folder name
        for issue in issues {
            guard let held = try lock(issue) else {
                outcome.spared.append((issue, .inFlight))
                continue
            }
            locks.append(held)
            lockedNames.append(issue.name)
            lockedFolders[issue.name] = issue.lockName
        }
        defer { withExtendedLifetime(locks) {} }
        guard !lockedNames.isEmpty else { return outcome }

        let marked = try write { changes -> [Issue] in
            var marked: [Issue] = []
            for name in lockedNames {
                guard var current = try changes.issue(named: name) else {
                    // Removed by another process after this one listed it: taking its lock made the lock file
                    // again. Deleted here, holding the lock, before anything else can be cut short.
                    if let folder = lockedFolders[name] { try POSIX.unlinkIfPresent(layout.issueLock(folder)) }
                    continue
                }
                if !current.isBeingRemoved {
                    guard markFirst else { continue }
                    if current.isPinned, purpose == .prune {
                        outcome.spared.append((current, .pinned))
                        continue
                    }
                    try changes.markBeingRemoved(&current)
                }
                marked.append(current)
            }
            return marked
        }
        reached(.marked)
        let sizes = marked.map { IssueRemoval.bytesOnDisk(of: $0, layout: layout) }
        var trashed: [String] = []
        try write { changes in
            // Staged (every record read) before any folder moves.
            changes.removalReason = purpose.rawValue
            for issue in marked {
                try changes.delete(named: issue.name)
                for asset in issue.assets { changes.clearPending(asset.id) }
            }
            for issue in marked {
                if let target = try IssueContent.moveToTrash(issue, layout: layout) { trashed.append(target) }
                // Before the commit, not after: a kill between the two left them for good (`verify` found the lock
                // files and content records of issues that were gone). This process holds the issue's lock and its
                // assets' locks, so these files are no one else's (see `FileLock`).
                try POSIX.unlinkIfPresent(layout.issueLock(issue.lockName))
                for asset in issue.assets { try deleteFiles(of: asset) }
            }
            reached(.trashed)
        }
        reached(.deleted)
        for (issue, bytes) in zip(marked, sizes) {
            IssueContent.removeEmptyFolders(of: issue, layout: layout)
            outcome.removed.append((issue, bytes))
        }
        for path in trashed { try TreeRemover.remove(path) }
        return outcome
    }
}

extension CatalogChanges {
    /// Marks `issue` (read in this change) as being removed, the first step of every removal.
    package mutating func markBeingRemoved(_ issue: inout Issue) throws {
        issue.isBeingRemoved = true
        try put(issue)
    }
}
