import Foundation
import Logging

/// A library of issues on disk (NewsstandKit's `NKLibrary`): the catalog in `library.json`, one
/// content folder per issue, and the downloads that fill them.
///
/// The actor owns this process's view of the manifest; every change goes through the manifest's
/// file lock, so several processes (and several `Library` values) may share one folder. There is no
/// shared instance: open as many libraries as you need.
public actor Library {
    /// The library folder.
    public nonisolated let rootURL: URL
    /// How downloads and unpacking behave.
    public nonisolated let configuration: Configuration
    nonisolated let layout: LibraryLayout
    nonisolated let store: ManifestStore
    nonisolated let logger: Logger
    /// The manifest as last read or written by this process.
    var manifest: Manifest
    /// Downloads running in this process, by asset identifier, so that `remove` can cancel them.
    var activeTasks: [String: Task<Outcome, Never>] = [:]
    /// The HTTP engine, created on the first download (catalog commands never start event loops).
    var engine: DownloadEngine?
    /// Manifest changes waiting for the next group commit.
    var queuedChanges: [QueuedChange] = []
    var isFlushing = false

    private init(rootURL: URL, configuration: Configuration, logger: Logger, store: ManifestStore, manifest: Manifest) {
        self.rootURL = rootURL
        self.configuration = configuration
        self.layout = store.layout
        self.store = store
        self.logger = logger
        self.manifest = manifest
    }

    /// Opens the library at `url`, creating the folder on first use.
    /// - Parameters:
    ///   - url: The library folder.
    ///   - configuration: Download, retry and unpack settings.
    ///   - logger: Where the library logs; it never bootstraps logging itself.
    /// - Returns: The opened library. Call ``shutdown()`` when done if it downloaded anything.
    /// - Throws: `NewsstandError` `.libraryUnavailable`, or `.manifestUnreadable` /
    ///   `.manifestFromNewerVersion` when `library.json` cannot be used (it is then left untouched).
    public static func open(
        at url: URL, configuration: Configuration = Configuration(), logger: Logger = Logger(label: "newsstand")
    ) async throws -> Library {
        let root = url.standardizedFileURL
        let layout = LibraryLayout(root: root.path)
        let store = ManifestStore(layout: layout)
        let manifest = try await runBlocking {
            do {
                try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
            } catch {
                throw NewsstandError(
                    .libraryUnavailable, "cannot create library folder \(layout.root): \(error.localizedDescription)",
                    underlying: error)
            }
            return try store.load()
        }
        return Library(rootURL: root, configuration: configuration, logger: logger, store: store, manifest: manifest)
    }

    /// Stops the HTTP engine, if one was started. Downloads still running are cancelled first.
    public func shutdown() async throws {
        for task in activeTasks.values { task.cancel() }
        if let engine {
            self.engine = nil
            try await engine.shutdown()
        }
    }

    // MARK: - Reading

    /// Re-reads `library.json`, picking up changes made by other processes.
    public func reload() async throws {
        let store = self.store
        manifest = try await runBlocking { try store.load() }
    }

    /// Every issue, newest date first (then by name).
    public var issues: [Issue] {
        // Sorting indices moves 8-byte integers instead of whole issues: noticeably faster at 100,000.
        let all = manifest.issues
        return all.indices.sorted { Library.newestFirst(all[$0], all[$1]) }.map { all[$0] }
    }

    /// The issue with this exact name (NewsstandKit's `issue(withName:)`), or nil.
    public func issue(named name: String) -> Issue? {
        manifest.issueIndex(named: name).map { manifest.issues[$0] }
    }

    /// The assets whose downloads were started and have not finished (NewsstandKit's
    /// `downloadingAssets`): what ``resumeDownloads(options:)`` picks up after a relaunch.
    public var downloadingAssets: [AssetDownload] {
        manifest.pendingDownloads.compactMap { id in
            manifest.location(ofAsset: id).map { manifest.issues[$0.issue].assets[$0.asset] }
        }
    }

    /// The issue's content folder (NewsstandKit's `contentURL`).
    public nonisolated func contentURL(for issue: Issue) -> URL {
        URL(fileURLWithPath: layout.contentFolder(issue.folderName), isDirectory: true)
    }

    /// The content folder of the named issue, created if it went missing.
    /// - Throws: `.issueNotFound`, or `.io` when the folder cannot be created.
    public func contentURL(forIssueNamed name: String) async throws -> URL {
        let issue = try existingIssue(named: name)
        let folder = layout.contentFolder(issue.folderName)
        try await runBlocking { try POSIX.makeDirectory(folder) }
        return URL(fileURLWithPath: folder, isDirectory: true)
    }

    static func newestFirst(_ a: Issue, _ b: Issue) -> Bool {
        a.date != b.date ? a.date > b.date : a.name < b.name
    }

    func existingIssue(named name: String) throws -> Issue {
        guard let issue = issue(named: name) else {
            throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(layout.root)")
        }
        return issue
    }

    // MARK: - Changing the catalog

    /// Adds an issue (NewsstandKit's `addIssue(withName:date:)`), with its assets in the same atomic change.
    /// - Parameters:
    ///   - name: The unique name. Any text without control characters; its folder name is derived safely.
    ///   - date: The issue's date.
    ///   - assets: Assets to add with it.
    /// - Returns: The new issue.
    /// - Throws: `.invalidIssueName`, `.duplicateIssue`, `.invalidURL`, or I/O errors; nothing is changed then.
    @discardableResult
    public func addIssue(named name: String, date: IssueDate, assets: [AssetRequest] = []) async throws -> Issue {
        try Library.validateName(name)
        for request in assets { try request.validate() }
        let layout = self.layout
        let store = self.store
        let (issue, manifest) = try await runBlocking {
            try store.update { manifest -> Issue in
                if manifest.issueIndex(named: name) != nil {
                    throw NewsstandError(.duplicateIssue, "an issue named \(name.debugDescription) already exists")
                }
                let folder = Library.uniqueFolderName(for: name, in: manifest, layout: layout)
                var issue = Issue(name: name, date: date, folderName: folder)
                var ids = Set(manifest.issues.lazy.flatMap { $0.assets.lazy.map(\.id) })
                for request in assets {
                    issue.assets.append(request.makeAsset(id: Library.newAssetID(avoiding: &ids)))
                }
                manifest.issues.append(issue)
                return issue
            }
        }
        self.manifest = manifest
        // After the manifest names it, so a crash never leaves a folder nothing lists.
        try await runBlocking { try POSIX.makeDirectory(layout.contentFolder(issue.folderName)) }
        return issue
    }

    /// Adds an asset to an existing issue (NewsstandKit's `addAsset(with:)`).
    /// - Returns: The new asset, whose `id` identifies it from now on.
    /// - Throws: `.issueNotFound`, `.invalidURL`, `.invalidChecksum`; nothing is changed then.
    @discardableResult
    public func addAsset(toIssueNamed name: String, _ request: AssetRequest) async throws -> AssetDownload {
        try request.validate()
        let layout = self.layout
        let store = self.store
        let (asset, manifest) = try await runBlocking {
            try store.update { manifest -> AssetDownload in
                guard let index = manifest.issueIndex(named: name), !manifest.issues[index].isBeingRemoved else {
                    throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(layout.root)")
                }
                var ids = Set(manifest.issues.lazy.flatMap { $0.assets.lazy.map(\.id) })
                let asset = request.makeAsset(id: Library.newAssetID(avoiding: &ids))
                manifest.issues[index].assets.append(asset)
                return asset
            }
        }
        self.manifest = manifest
        return asset
    }

    /// Removes an issue: cancels its downloads, deletes its content folder and partial files, and
    /// drops it from the manifest.
    ///
    /// The order makes every crash recoverable: the issue is first marked as being removed (still
    /// listed), its folder is moved into the library's trash in one rename, partial files go, then the
    /// manifest entry goes, then the trash is emptied. Running `remove` again finishes an interrupted one.
    /// - Throws: `.issueNotFound`, or I/O errors (the issue then stays listed).
    public func removeIssue(named name: String) async throws {
        let layout = self.layout
        let store = self.store
        let (issue, marked) = try await runBlocking {
            try store.update { manifest -> Issue in
                guard let index = manifest.issueIndex(named: name) else {
                    throw NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(layout.root)")
                }
                manifest.issues[index].isBeingRemoved = true
                return manifest.issues[index]
            }
        }
        manifest = marked
        let ids = issue.assets.map(\.id)
        for id in ids {
            activeTasks[id]?.cancel()
        }
        for id in ids {
            _ = await activeTasks[id]?.value
        }
        let (_, final) = try await runBlocking {
            let content = layout.contentFolder(issue.folderName)
            try POSIX.makeDirectory(layout.trash)
            try POSIX.makeDirectory(layout.staging)
            let trashed = "\(layout.trash)/\(issue.folderName)-\(UInt32.random(in: 0...UInt32.max))"
            do {
                // Downloads in other processes fill the folder only under this lock, after checking that the
                // issue is not being removed; so after this, nothing recreates it.
                let lock = try FileLock(path: layout.issueLock(issue.folderName))
                defer { withExtendedLifetime(lock) {} }
                if POSIX.exists(content) { try POSIX.rename(content, trashed) }
            }
            for id in ids {
                // A download still running in another process keeps its files until it notices the removal.
                _ = try Library.discardDownloadFiles(of: id, layout: layout)
                try Library.removeTree(layout.stagingFolder(id))
            }
            try POSIX.unlinkIfPresent(layout.issueLock(issue.folderName))
            let result = try store.update { manifest in
                manifest.issues.removeAll { $0.name == name }
                let gone = Set(ids)
                manifest.pendingDownloads.removeAll { gone.contains($0) }
            }
            // Best effort: the issue is already gone from the manifest, and anything left in the trash is
            // emptied by the next download run.
            try? Library.removeTree(trashed)
            return result
        }
        manifest = final
    }

    // MARK: - Helpers

    static let maxNameLength = 1024

    static func validateName(_ name: String) throws {
        if name.allSatisfy(\.isWhitespace) {
            throw NewsstandError(.invalidIssueName, "an issue name cannot be empty")
        }
        if name.utf8.count > maxNameLength {
            throw NewsstandError(
                .invalidIssueName,
                "the issue name is \(name.utf8.count) bytes long; at most \(maxNameLength) are allowed")
        }
        if let bad = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let hex = String(bad.value, radix: 16, uppercase: true)
            throw NewsstandError(
                .invalidIssueName,
                "the issue name \(name.debugDescription) contains a control character (U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex))"
            )
        }
    }

    /// A folder name derived from `name`, unique among the library's issues (case-insensitively, so a
    /// library can move to a case-insensitive disk) and not already taken on disk.
    static func uniqueFolderName(for name: String, in manifest: Manifest, layout: LibraryLayout) -> String {
        var base = SafePathComponent(sanitizing: name)
        if LibraryLayout.isReserved(base.value) { base = SafePathComponent(sanitizing: "_" + base.value) }
        let taken = Set(manifest.issues.lazy.map { $0.folderName.lowercased() })
        var candidate = base
        var n = 2
        while taken.contains(candidate.value.lowercased()) || POSIX.exists(layout.contentFolder(candidate.value)) {
            candidate = base.withSuffix(n)
            n += 1
        }
        return candidate.value
    }

    static func newAssetID(avoiding ids: inout Set<String>) -> String {
        while true {
            let id = String(UInt64.random(in: 0...UInt64.max) & 0xFFFF_FFFF_FFFF, radix: 16)
            let padded = String(repeating: "0", count: 12 - id.count) + id
            if ids.insert(padded).inserted { return padded }
        }
    }

    static func removeTree(_ path: String) throws {
        guard POSIX.exists(path) else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw NewsstandError(.io, "cannot delete \(path): \(error.localizedDescription)", underlying: error)
        }
    }
}
