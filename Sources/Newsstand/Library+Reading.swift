import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandDownload

/// Reading the catalog: summaries from the index, whole records, what is downloading, where content is.
extension Library {
    /// Every issue's summary, newest date first (then by name), read from the catalog's index: the
    /// cheap way to list a large library.
    /// - Parameter status: Only issues with this status, when given.
    public func summaries(status: Issue.Status? = nil) async throws -> [IssueSummary] {
        Array(try await listing(status: status))
    }

    /// ``summaries(status:)`` held compactly: what a caller showing a million issues asks for.
    /// - Parameter status: Only issues with this status, when given.
    public func listing(status: Issue.Status? = nil) async throws -> IssueListing {
        let catalog = self.catalog
        return try await runBlocking { try catalog.listing(status: status) }
    }

    /// Every issue with its assets, newest date first (then by name).
    /// - Parameter status: Only issues with this status, when given.
    public func issues(status: Issue.Status? = nil) async throws -> [Issue] {
        let catalog = self.catalog
        return try await runBlocking {
            try catalog.issues(status: status)
        }.map(located)
    }

    /// The issue with this exact name (NewsstandKit's `issue(withName:)`), or nil. Reads one record.
    public func issue(named name: String) async throws -> Issue? {
        let catalog = self.catalog
        return try await runBlocking { try catalog.issue(named: name) }.map(located)
    }

    /// The assets whose downloads were started and have not finished (NewsstandKit's
    /// `downloadingAssets`): what ``resumeDownloads(options:isolation:_:)`` picks up after a relaunch.
    public func downloadingAssets() async throws -> [AssetDownload] {
        let catalog = self.catalog
        return try await runBlocking {
            let markers = try catalog.pendingMarkers()
            var issues: [String: Issue?] = [:]
            return try markers.compactMap { marker -> AssetDownload? in
                if issues[marker.key] == nil { issues[marker.key] = .some(try catalog.record(key: marker.key)) }
                let issue = issues[marker.key] ?? nil
                // A complete asset's marker is one whose removal a power cut undid (removals are not flushed).
                return issue.flatMap(self.located)?.assets.first {
                    $0.id == marker.id && $0.state != .failed && !$0.isComplete
                }
            }
        }
    }

    /// The issue's content folder (NewsstandKit's `contentURL`). It exists once a file was placed in it;
    /// ``contentURL(forIssueNamed:)`` creates it on demand.
    public nonisolated func contentURL(for issue: Issue) -> URL {
        URL(fileURLWithPath: layout.contentFolder(issue.folderName), isDirectory: true)
    }

    /// The issue with each asset's ``AssetDownload/fileURL`` set.
    nonisolated func located(_ issue: Issue) -> Issue {
        var issue = issue
        for index in issue.assets.indices {
            issue.assets[index] = issue.assets[index].located(in: layout.contentFolder(issue.folderName))
        }
        return issue
    }

    /// The content folder of the named issue, created if it does not exist yet.
    /// - Throws: `.issueNotFound`, or `.io` when the folder cannot be created.
    public func contentURL(forIssueNamed name: String) async throws -> URL {
        let issue = try await existingIssue(named: name)
        let folder = layout.contentFolder(issue.folderName)
        let layout = self.layout
        try await runBlocking { try IssueContent.makeFolders(issue.folderName, layout: layout) }
        return URL(fileURLWithPath: folder, isDirectory: true)
    }

    func existingIssue(named name: String) async throws -> Issue {
        guard let issue = try await issue(named: name), !issue.isBeingRemoved else {
            throw notFound(name)
        }
        return issue
    }

    nonisolated func notFound(_ name: String) -> NewsstandError {
        NewsstandError.issueNotFound(name, in: layout.root)
    }
}
