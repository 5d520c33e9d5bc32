import Foundation
import Logging
import Newsstand
import NewsstandCatalog
import NewsstandCore
import NewsstandDownload

/// What every handler shares: the library, the shelf's cached index, the security policy and the
/// background downloads.
final class ServerState: Sendable {
    let library: Library
    let layout: LibraryLayout
    let shelf: ShelfIndex
    let policy: SecurityPolicy
    let downloads: DownloadRunner
    let logger: Logger

    init(library: Library, policy: SecurityPolicy, downloads: DownloadRunner, logger: Logger) {
        self.library = library
        layout = library.layout
        shelf = ShelfIndex(catalog: library.catalog)
        self.policy = policy
        self.downloads = downloads
        self.logger = logger
    }

    /// The catalog key of an issue name (what URLs carry: names may hold any character, even `/`).
    static func key(for name: String) -> String { Catalog.key(for: name) }

    /// The issue whose key is `key`, or nil: one record read by its key (no table of keys is held).
    /// Blocking.
    func issue(key: String) throws -> Issue? {
        guard key.count == 32, key.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        guard let issue = try library.catalog.record(key: key), Catalog.key(for: issue.name) == key else { return nil }
        return issue
    }

    /// As ``issue(key:)``, off the cooperative pool; throws `.issueNotFound` when there is none.
    func requireIssue(key: String) async throws -> Issue {
        let found = try await runBlocking { try self.issue(key: key) }
        guard let found else {
            throw NewsstandError(.issueNotFound, "there is no issue with the key \(key.debugDescription)")
        }
        return found
    }

    /// The issue's content folder.
    func directory(of issue: Issue) -> String { layout.contentFolder(issue.folderName) }

    /// Whether the issue was read.
    func readNames() throws -> Set<String> { try library.readIssueNames() }
}
