import NewsstandCore

/// A change to stage in a catalog write (queued for a group commit); returns false when what it meant to
/// change is gone (removed).
package typealias CatalogChange = @Sendable (inout CatalogChanges) throws -> Bool

/// The changes one catalog write stages: issues put or deleted, folder names claimed or released,
/// pending-download markers set or cleared. ``Catalog/write(_:)`` applies them all under one lock.
package struct CatalogChanges {
    package let catalog: Catalog
    /// The bucket depth in force for this write (read under the lock).
    let digits: Int
    /// Key → the issue as it will be stored, or nil when it is deleted.
    private(set) var staged: [String: Issue?] = [:]
    /// Key → the record as it was read, to skip writes that change nothing.
    private var original: [String: Issue?] = [:]
    private var order: [String] = []
    private(set) var pendingAdded: [String: String] = [:]
    private(set) var pendingRemoved: Set<String> = []
    /// Folder key → the issue key that now claims it, or nil when the claim goes.
    private(set) var claimChanges: [String: String?] = [:]
    /// The buckets read so far, by path: an import of thousands of issues reads each bucket once.
    private(set) var buckets: [String: CatalogBucket] = [:]
    /// Why this change deletes issues, carried by their `issue.removed` events: `remove` or `prune`.
    package var removalReason = "remove"

    init(catalog: Catalog, digits: Int) {
        self.catalog = catalog
        self.digits = digits
    }

    /// The keys whose record changes, in the order they were first touched.
    var changedKeys: [String] {
        order.filter { (staged[$0] ?? nil) != (original[$0] ?? nil) }
    }

    /// The record under `key` as it was before this change (nil when there was none or it was never read).
    func originalIssue(_ key: String) -> Issue? {
        original[key] ?? nil
    }

    /// The issue with exactly this name, as staged so far, or nil.
    package mutating func issue(named name: String) throws -> Issue? {
        let found = try issue(key: Catalog.key(for: name))
        return found?.name == name ? found : nil
    }

    /// The issue stored under `key`, as staged so far, or nil.
    package mutating func issue(key: String) throws -> Issue? {
        if let staged = staged[key] { return staged }
        if let original = original[key] { return original }
        let record = try bucket(key).issue(key)
        original[key] = .some(record)
        return record
    }

    /// The bucket that holds `key`, read once per change.
    package mutating func bucket(_ key: String) throws -> CatalogBucket {
        let path = catalog.layout.bucket(key, digits: digits)
        if let bucket = buckets[path] { return bucket }
        let bucket = try CatalogBucket.load(path)
        buckets[path] = bucket
        return bucket
    }

    /// Reads every bucket the commit will rewrite (the records and claims staged so far): a damaged one then
    /// stops the change here, before a caller that moves files inside the write has moved anything.
    /// - Throws: `.manifestUnreadable` naming the damaged bucket.
    package mutating func readTouchedBuckets() throws {
        for key in order { _ = try bucket(key) }
        for folderKey in claimChanges.keys.sorted() { _ = try bucket(folderKey) }
    }

    /// Whether a live issue owns `folderName` (case-folded), counting this change's claims. A claim whose
    /// issue is gone, or now has another folder, is stale (a crash between its steps) and does not count.
    package mutating func isFolderClaimed(_ folderName: String) throws -> Bool {
        let folderKey = Catalog.folderKey(folderName)
        if let change = claimChanges[folderKey] { return change != nil }
        guard let owner = try bucket(folderKey).claim(folderKey), let issue = try issue(key: owner) else {
            return false
        }
        return Catalog.folderKey(issue.claimName) == folderKey
    }

    /// Stages `issue` (its status recomputed from its assets).
    package mutating func put(_ issue: Issue) throws {
        let key = Catalog.key(for: issue.name)
        if let existing = try self.issue(key: key), existing.name != issue.name {
            // Two names with one 128-bit key: never seen, but never silently merged either.
            throw NewsstandError(
                .duplicateIssue,
                "the issue names \(existing.name.debugDescription) and \(issue.name.debugDescription) share a catalog key")
        }
        var issue = issue
        issue.updateStatus()
        touch(key)
        staged[key] = .some(issue)
    }

    /// Stages the removal of the named issue's record.
    package mutating func delete(named name: String) throws {
        let key = Catalog.key(for: name)
        if let existing = try issue(key: key) { claimChanges[Catalog.folderKey(existing.claimName)] = .some(nil) }
        touch(key)
        staged[key] = .some(nil)
    }

    /// Changes one stored issue in place.
    /// - Returns: false when there is no such issue.
    @discardableResult
    package mutating func update(named name: String, _ change: (inout Issue) throws -> Void) throws -> Bool {
        guard var issue = try issue(named: name) else { return false }
        try change(&issue)
        try put(issue)
        return true
    }

    /// Changes the asset with `id` of the named issue (statuses follow when the change is stored).
    /// - Returns: false when the issue or the asset is gone, or the issue is being removed.
    package mutating func updateAsset(
        _ id: String, ofIssueNamed name: String, _ change: (inout AssetDownload) -> Void
    ) throws -> Bool {
        guard var issue = try issue(named: name), !issue.isBeingRemoved,
            let index = issue.assets.firstIndex(where: { $0.id == id })
        else { return false }
        change(&issue.assets[index])
        try put(issue)
        return true
    }

    /// Puts an asset into the saved list of pending downloads.
    package mutating func markPending(_ assetID: String, issueNamed name: String) {
        pendingRemoved.remove(assetID)
        pendingAdded[assetID] = Catalog.key(for: name)
    }

    /// Takes an asset out of the saved list of pending downloads.
    package mutating func clearPending(_ assetID: String) {
        pendingAdded[assetID] = nil
        pendingRemoved.insert(assetID)
    }

    /// Claims a content folder name for a new issue (with the records, under the lock, so the next
    /// writer finds the name taken). The folder itself is made when the first file is placed in it,
    /// or when someone asks for its path: 100,000 empty folders would cost 400 MB and a minute.
    package mutating func claimFolder(_ folderName: String, forIssueNamed name: String) {
        claimChanges[Catalog.folderKey(folderName)] = .some(Catalog.key(for: name))
    }

    /// Sets or drops one folder claim as it is (for `verify --repair`).
    mutating func setClaim(_ folderKey: String, owner: String?) {
        claimChanges[folderKey] = .some(owner)
    }

    private mutating func touch(_ key: String) {
        if staged[key] == nil { order.append(key) }
    }
}
