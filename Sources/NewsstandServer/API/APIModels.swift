import Newsstand

/// The API's own envelopes around the library's report types (which they carry unchanged).

/// One issue: its key (as in URLs), whether it was read, and its ``IssueReport``.
struct IssueEntry: Codable, Sendable {
    var key: String
    var read: Bool
    var issue: IssueReport
}

/// A page of issues. With `?since=CURSOR`, the issues changed after that event cursor (and the names of
/// those removed) instead of a page.
struct IssueList: Codable, Sendable {
    var total: Int
    var offset: Int
    var limit: Int
    /// The event log's last cursor when the list was read: the next `?since=`.
    var cursor: Int64
    var items: [IssueEntry]
    var removed: [String]?
}

struct EventList: Codable, Sendable {
    var cursor: Int64
    var events: [EventReport]
}

struct Session: Codable, Sendable {
    var csrfToken: String
    var version: String
    var cursor: Int64
}

struct Message: Codable, Sendable {
    var message: String
}

struct SubscribeResult: Codable, Sendable {
    var subscription: SubscriptionReport?
    var addedIssues: [String]
    var message: String
}

struct SubscribeRequest: Codable, Sendable {
    var url: String
}
