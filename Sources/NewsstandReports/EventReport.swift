import Foundation
import NewsstandCatalog
import NewsstandCore

/// The machine-readable shape of one event: a line of `issues events --json`, the JSON an exec hook reads on
/// stdin and the body a webhook receives. `cursor` orders events (strictly increasing, with gaps); `id` is
/// the idempotency key, the same on every delivery of the event.
///
/// ```
/// {"cursor":12,"id":"…","issue":{IssueReport},"kind":"issue.available","reportVersion":1,
///  "time":"2026-11-20T06:00:00.123Z"}
/// ```
/// Shape version ``reportVersion``: a change that removes or renames a key raises it; a new key does not.
public struct EventReport: Codable, Sendable, Hashable {
    public static let reportVersion = 1

    public var reportVersion: Int = EventReport.reportVersion
    public var cursor: Int64
    public var id: String
    /// `issue.added`, `issue.available`, `issue.failed`, `issue.removed`, `subscription.added`,
    /// `subscription.failing`, `subscription.gone`, `subscription.moved` or `library.low-space`.
    public var kind: String
    /// ISO 8601 with milliseconds, UTC.
    public var time: String
    /// `remove` or `prune` for `issue.removed`; the error of `subscription.failing`.
    public var reason: String?
    /// The URL a moved subscription left; the free bytes of `library.low-space`.
    public var detail: String?
    /// The issue after the change (as it was, for `issue.removed`).
    public var issue: IssueReport?
    public var subscription: Subscription?

    /// The subscription an event is about (its feed URL never carries credentials).
    public struct Subscription: Codable, Sendable, Hashable {
        public var id: String
        public var name: String
        public var url: String
    }
}

extension EventReport {
    package init(_ event: CatalogEvent, layout: LibraryLayout) {
        cursor = event.cursor
        id = event.id
        kind = event.kind.rawValue
        time = event.time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        reason = event.reason
        detail = event.detail
        issue = event.issue.map {
            IssueReport($0, directory: layout.contentFolder($0.folderName), recordVersion: Int(IssueRecord.version(of: $0)))
        }
        subscription = event.subscription.map { Subscription(id: $0.id, name: $0.name, url: $0.url) }
    }
}
