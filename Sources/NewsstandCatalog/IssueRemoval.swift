import NewsstandCore

/// Removes a batch of issues in the order of ``Library/removeIssue(named:)``, for `prune` and for
/// `verify --repair` (which finishes removals a crash cut short). Blocking.
///
/// 1. Each issue's lock and every asset's download lock are taken without waiting; an issue whose
///    lock is held elsewhere is in flight and spared. Holding them, no download or unpack can start
///    on these issues and nothing can be placed into their folders.
/// 2. One catalog change marks them as being removed (still listed: a crash from here on leaves them
///    for `verify --repair` or `remove` to finish). A record that became pinned meanwhile is spared.
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

    let catalog: Catalog
    let layout: LibraryLayout
    /// Whether the caller already holds the catalog lock (`verify --repair`).
    var catalogLocked = false
    /// The reason the `issue.removed` events give: `prune` unless the caller says otherwise.
    var reason = "prune"

    package struct Outcome {
        package var removed: [(issue: Issue, bytes: Int64)] = []
        package var spared: [(issue: Issue, protection: PruneReport.Protection)] = []
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

    private func write<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        catalogLocked ? try catalog.writeHoldingLock(body) : try catalog.write(body)
    }

    /// Removes `issues`.
    /// - Parameter markFirst: Mark them as being removed first (prune). Without it only issues already
    ///   marked are removed (finishing interrupted removals); the others are left alone.
    package func remove(_ issues: [Issue], markFirst: Bool) throws -> Outcome {
        var outcome = Outcome()
        try POSIX.makeDirectory(layout.downloads)
        try POSIX.makeDirectory(layout.staging)
        // Held until the folders renamed into the trash are deleted: no sweep deletes them under us.
        let trash = try Trash.hold(layout)
        defer { withExtendedLifetime(trash) {} }
        var locks: [FileLock] = []
        var assetLocks: [AssetLock] = []
        var lockedNames: [String] = []
        var lockedFolders: [String: String] = [:]  // name → folder name
        for issue in issues {
            guard let issueLock = try FileLock.try(path: layout.issueLock(issue.lockName)) else {
                outcome.spared.append((issue, .inFlight))
                continue
            }
            // Every asset's lock on one descriptor: an issue costs two, however many assets it has.
            guard let held = try AssetLock.try(all: issue.assets.map(\.id), layout: layout) else {
                outcome.spared.append((issue, .inFlight))
                continue
            }
            locks.append(issueLock)
            assetLocks.append(held)
            lockedNames.append(issue.name)
            lockedFolders[issue.name] = issue.lockName
        }
        defer { withExtendedLifetime((locks, assetLocks)) {} }
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
                    if current.isPinned {
                        outcome.spared.append((current, .pinned))
                        continue
                    }
                    // The folder claim's bucket too (the record's was read above): a damaged one stops the
                    // prune here, before anything is marked or moved.
                    _ = try changes.bucket(Catalog.folderKey(current.claimName))
                    current.isBeingRemoved = true
                    try changes.put(current)
                }
                marked.append(current)
            }
            return marked
        }
        CrashPoint.reached("prune-marked")
        let sizes = marked.map { IssueRemoval.bytesOnDisk(of: $0, layout: layout) }
        var trashed: [String] = []
        try write { changes in
            // Staged and validated (every bucket readable) before any folder moves.
            changes.removalReason = reason
            for issue in marked {
                try changes.delete(named: issue.name)
                for asset in issue.assets { changes.clearPending(asset.id) }
            }
            try changes.readTouchedBuckets()
            for issue in marked {
                if let target = try IssueContent.moveToTrash(issue, layout: layout) { trashed.append(target) }
                // Before the commit, not after: a kill between the two left them for good (`verify` found the lock
                // files and content records of issues that were gone). This process holds the issue's lock and its
                // assets' locks, so these files are no one else's (see `FileLock`).
                try POSIX.unlinkIfPresent(layout.issueLock(issue.lockName))
                for asset in issue.assets {
                    for path in [
                        layout.partialFile(asset.id), layout.completedFile(asset.id), layout.resumeRecord(asset.id),
                        layout.contentRecord(asset.id), layout.legacyAssetLock(asset.id),
                    ] {
                        try POSIX.unlinkIfPresent(path)
                    }
                    try TreeRemover.remove(layout.stagingFolder(asset.id))
                }
            }
            CrashPoint.reached("prune-trashed")
        }
        CrashPoint.reached("prune-deleted")
        for (issue, bytes) in zip(marked, sizes) {
            IssueContent.removeEmptyFolders(of: issue, layout: layout)
            outcome.removed.append((issue, bytes))
        }
        for path in trashed { try TreeRemover.remove(path) }
        return outcome
    }

    package init(catalog: NewsstandCatalog.Catalog, layout: NewsstandCore.LibraryLayout, catalogLocked: Bool = false) {
        self.catalog = catalog
        self.layout = layout
        self.catalogLocked = catalogLocked
    }
}
