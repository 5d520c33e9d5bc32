import NewsstandCore

/// Which issues `list` shows: by status (read from the catalog's index alone), and by subscription or
/// publication (which the index does not hold, so each record is read).
public struct IssueFilter: Sendable, Hashable {
    /// Only issues with this status, when given.
    public var status: Issue.Status?
    /// Only issues that came from the subscription with this identifier, when given.
    public var subscriptionID: String?
    /// Only issues of this publication (``Issue/publicationName``, compared case-insensitively), when given.
    public var publication: String?

    public init(status: Issue.Status? = nil, subscriptionID: String? = nil, publication: String? = nil) {
        self.status = status
        self.subscriptionID = subscriptionID
        self.publication = publication
    }

    /// Whether the index's summary is enough to decide: no filter needs the record.
    public var needsRecords: Bool { subscriptionID != nil || publication != nil }

    /// Whether `issue` passes every filter given.
    public func matches(_ issue: Issue) -> Bool {
        if let status, issue.status != status { return false }
        if let subscriptionID, issue.origin?.subscriptionID != subscriptionID { return false }
        if let publication, issue.publicationName.lowercased() != publication.lowercased() { return false }
        return true
    }
}

extension Library {
    /// A filter for the subscription named `subscription` (case-insensitively) and the publication given.
    /// - Throws: `.subscriptionNotFound` when there is no subscription of that name.
    public func issueFilter(
        status: Issue.Status? = nil, subscription: String? = nil, publication: String? = nil
    ) async throws -> IssueFilter {
        var filter = IssueFilter(status: status, publication: publication)
        if let subscription {
            guard let found = try await self.subscription(named: subscription) else {
                throw NewsstandError(.subscriptionNotFound, "no subscription named \(subscription.debugDescription)")
            }
            filter.subscriptionID = found.id
        }
        return filter
    }

    /// The summaries of the issues `filter` passes, newest date first: from the index alone when it can.
    public func summaries(_ filter: IssueFilter) async throws -> [IssueSummary] {
        Array(try await listing(filter))
    }

    /// ``summaries(_:)`` held compactly (an `IssueListing`).
    public func listing(_ filter: IssueFilter) async throws -> IssueListing {
        guard filter.needsRecords else { return try await listing(status: filter.status) }
        return IssueListing(try await issues(status: filter.status).filter(filter.matches).map(IssueSummary.init))
    }
}
