import NewsstandCore
import NewsstandDownload

/// Pinning: NewsstandKit's `currentlyReadingIssue`, for as many issues as the user likes. A pinned
/// issue is never pruned.
extension Library {
    /// Pins or unpins the named issues, all in one catalog change (reads and writes only their rows).
    /// - Parameters:
    ///   - names: The issues' exact names.
    ///   - pinned: true to pin, false to unpin.
    /// - Returns: The issues as they now are, in the order named. An issue already in that state is
    ///   returned unchanged (and not rewritten).
    /// - Throws: `.issueNotFound` naming the first unknown issue; nothing is changed then.
    @discardableResult
    public func setPinned(_ pinned: Bool, issuesNamed names: [String]) async throws -> [Issue] {
        let catalog = self.catalog
        let root = layout.root
        return try await runBlocking {
            try catalog.write { changes -> [Issue] in
                var result: [Issue] = []
                for name in names {
                    guard var issue = try changes.issue(named: name), !issue.isBeingRemoved else {
                        throw NewsstandError.issueNotFound(name, in: root)
                    }
                    if issue.isPinned != pinned {
                        issue.isPinned = pinned
                        try changes.put(issue)
                    }
                    result.append(issue)
                }
                return result
            }
        }
    }

    /// Pins the named issues: ``prune(_:dryRun:)`` never removes them.
    /// - Throws: `.issueNotFound`; nothing is changed then.
    @discardableResult
    public func pin(issuesNamed names: [String]) async throws -> [Issue] {
        try await setPinned(true, issuesNamed: names)
    }

    /// Unpins the named issues.
    /// - Throws: `.issueNotFound`; nothing is changed then.
    @discardableResult
    public func unpin(issuesNamed names: [String]) async throws -> [Issue] {
        try await setPinned(false, issuesNamed: names)
    }
}
