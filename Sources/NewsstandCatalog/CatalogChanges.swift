import GRDB
import NewsstandCore

/// A change to stage in a catalog write (queued for a group commit); returns false when what it meant to
/// change is gone (removed).
package typealias CatalogChange = @Sendable (inout CatalogChanges) throws -> Bool

/// The changes one catalog write stages: issues put or deleted, folder names claimed or released,
/// saved-list entries set or cleared. ``Catalog/write(_:)`` commits them all in one transaction.
package struct CatalogChanges {
    package let catalog: Catalog
    /// The transaction the changes are staged in: what they read is what they commit over.
    let db: Database
    /// Key → the issue as it will be stored, or nil when it is deleted.
    private(set) var staged: [String: Issue?] = [:]
    /// Key → the record as it was read, to skip writes that change nothing.
    private var original: [String: Issue?] = [:]
    private var order: [String] = []
    private(set) var pendingAdded: [String: String] = [:]
    private(set) var pendingRemoved: Set<String> = []
    /// Folder key → the issue key that claims it in this change, or nil when the claim goes: kept as records are
    /// staged, so that an import of thousands checks each new folder name in constant time.
    private var claimChanges: [String: String?] = [:]
    /// Why this change deletes issues, carried by their `issue.removed` events: `remove` or `prune`.
    package var removalReason = "remove"

    init(catalog: Catalog, db: Database) {
        self.catalog = catalog
        self.db = db
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
        let record = try CatalogRows.issue(key: key, db, path: catalog.recordPath(key))
        original[key] = .some(record)
        return record
    }

    /// Whether a live issue owns `folderName` (case-folded), counting this change's claims and records.
    package mutating func isFolderClaimed(_ folderName: String) throws -> Bool {
        let folderKey = Catalog.folderKey(folderName)
        if let change = claimChanges[folderKey] { return change != nil }
        for owner in try CatalogRows.folderOwners(folderKey, db) {
            // A row this change deletes or moves to another folder no longer claims it.
            guard let issue = try issue(key: owner) else { continue }
            if Catalog.folderKey(issue.claimName) == folderKey { return true }
        }
        return false
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
        let folderKey = Catalog.folderKey(issue.claimName)
        if let before = try self.issue(key: key), Catalog.folderKey(before.claimName) != folderKey {
            claimChanges[Catalog.folderKey(before.claimName)] = .some(nil)
        }
        claimChanges[folderKey] = .some(key)
        touch(key)
        staged[key] = .some(issue)
    }

    /// Stages the removal of the named issue's record (and its saved-list entries).
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

    /// Claims a content folder name for a new issue, so that the next writer finds the name taken. The claim
    /// is the record's own folder (a column of its row) once the issue is put; this holds it within the change.
    /// The folder itself is made when the first file is placed in it, or when someone asks for its path.
    package mutating func claimFolder(_ folderName: String, forIssueNamed name: String) {
        claimChanges[Catalog.folderKey(folderName)] = .some(Catalog.key(for: name))
    }

    private mutating func touch(_ key: String) {
        if staged[key] == nil { order.append(key) }
    }
}
