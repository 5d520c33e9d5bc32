import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandDownload

/// Adding issues and assets, and removing issues.
extension Library {
    /// Adds an issue (NewsstandKit's `addIssue(withName:date:)`), with its assets in the same atomic change.
    /// - Parameters:
    ///   - name: The unique name. Any text without control characters; its folder name is derived safely.
    ///   - date: The issue's date.
    ///   - assets: Assets to add with it.
    ///   - publication: The publication it belongs to (what `prune --keep` groups by); nil to derive it
    ///     from the name (see ``Issue/publicationName``).
    ///   - template: How to file its files (``LayoutTemplate``); nil for the configuration's
    ///     ``Configuration/layoutTemplate``, and without one a folder of its own.
    /// - Returns: The new issue.
    /// - Throws: `.invalidIssueName`, `.duplicateIssue`, `.invalidURL`, or I/O errors; nothing is changed then.
    @discardableResult
    public func addIssue(
        named name: String, date: IssueDate, assets: [AssetRequest] = [], publication: String? = nil,
        template: LayoutTemplate? = nil
    ) async throws -> Issue {
        try IssueName.validate(name)
        for request in assets { try request.validate() }
        let catalog = self.catalog
        let filing = (template ?? configuration.layoutTemplate).map { Filing(template: $0, publication: publication) }
        return try await runBlocking {
            try catalog.write { changes in
                try Library.stageNewIssue(
                    named: name, date: date, assets: assets, publication: publication, filing: filing, in: &changes)
            }
        }
    }

    /// Stages a new issue, its assets and the claim of its content folder's name (or, filed by `filing`, of its
    /// place in a shared folder: decided and recorded here, before any byte is fetched, so that a killed
    /// download and its `resume` place the file at the same path).
    static func stageNewIssue(
        named name: String, date: IssueDate, assets: [AssetRequest], publication: String? = nil,
        filing: Filing? = nil, in changes: inout CatalogChanges
    ) throws -> Issue {
        if try changes.issue(named: name) != nil {
            throw NewsstandError(.duplicateIssue, "an issue named \(name.debugDescription) already exists")
        }
        let publication = publication.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        var issue: Issue
        if let filing {
            issue = try filedIssue(named: name, date: date, publication: publication, filing: filing, in: &changes)
        } else {
            let folder = try uniqueFolderName(for: name, layout: changes.catalog.layout) {
                try changes.isFolderClaimed($0)
            }
            issue = Issue(name: name, date: date, folderName: folder)
        }
        issue.publication = publication
        // Every new issue passes here (add, import, a feed's items): passwords in its URLs go to the 0600
        // credentials file, and the record, which others may read, keeps the URL without them.
        let assets = try CredentialStore(layout: changes.catalog.layout).separating(assets)
        issue.assets = assets.map { $0.makeAsset(id: Library.newAssetID()) }
        try changes.put(issue)
        changes.claimFolder(issue.claimName, forIssueNamed: name)
        issue.updateStatus()
        return issue
    }

    /// Adds an asset to an existing issue (NewsstandKit's `addAsset(with:)`).
    /// - Returns: The new asset, whose `id` identifies it from now on.
    /// - Throws: `.issueNotFound`, `.invalidURL`, `.invalidChecksum`; nothing is changed then.
    @discardableResult
    public func addAsset(toIssueNamed name: String, _ request: AssetRequest) async throws -> AssetDownload {
        try request.validate()
        let catalog = self.catalog
        let notFound = self.notFound(name)
        return try await runBlocking {
            try catalog.write { changes -> AssetDownload in
                guard var issue = try changes.issue(named: name), !issue.isBeingRemoved else { throw notFound }
                let request = try CredentialStore(layout: changes.catalog.layout).separating([request])[0]
                let asset = request.makeAsset(id: Library.newAssetID())
                issue.assets.append(asset)
                try changes.put(issue)
                return asset
            }
        }
    }

    /// Removes an issue: cancels its downloads, deletes its content folder and partial files, and
    /// drops it from the catalog.
    ///
    /// The order makes every crash recoverable: the issue is first marked as being removed (still
    /// listed), its downloads in this process are cancelled, and then ``IssueRemoval``, the one removal
    /// `prune` and `verify --repair` use too, moves its folder into the library's trash and deletes its record
    /// in one change, so its folder name is never free on disk while a record still claims it. Running
    /// `remove` again finishes an interrupted one.
    /// - Throws: `.issueNotFound`, or I/O errors (the issue then stays listed).
    public func removeIssue(named name: String) async throws {
        let layout = self.layout
        let catalog = self.catalog
        let notFound = self.notFound(name)
        let issue = try await runBlocking {
            try catalog.write { changes -> Issue in
                guard var issue = try changes.issue(named: name) else { throw notFound }
                try changes.markBeingRemoved(&issue)
                return issue
            }
        }
        let ids = issue.assets.map(\.id)
        let running = runningTasks(for: ids)
        for task in running { task.cancel() }
        for task in running { _ = await task.value }
        try await runBlocking {
            _ = try IssueRemoval(catalog: catalog, layout: layout, purpose: .remove).remove([issue], markFirst: false)
        }
    }

    // MARK: - Helpers

    /// A folder name derived from `name`, not taken on disk, not reserved by the library, and not
    /// claimed (case-insensitively) by another issue, including the others of the same change.
    static func uniqueFolderName(
        for name: String, layout: LibraryLayout, isClaimed: (String) throws -> Bool
    ) throws -> String {
        var base = SafePathComponent(sanitizing: name)
        if LibraryLayout.isReserved(base.value) || LibraryLayout.isLibraryFile(base.value) {
            base = SafePathComponent(sanitizing: "_" + base.value)
        }
        var candidate = base
        var n = 2
        while try POSIX.exists(layout.contentFolder(candidate.value)) || isClaimed(candidate.value) {
            candidate = base.withSuffix(n)
            n += 1
        }
        return candidate.value
    }

    /// A new asset identifier: 64 random bits in hex, unique without consulting the catalog (the
    /// chance of two equal among a million assets is about 3 in 100 million).
    static func newAssetID() -> String {
        let id = String(RandomBytes.uint64(), radix: 16)
        return String(repeating: "0", count: 16 - id.count) + id
    }
}
