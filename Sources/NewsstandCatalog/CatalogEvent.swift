import Foundation
import NewsstandCore

/// One event of the event log (a row of the catalog's `events` table) as stored: what changed, with the identity a consumer
/// needs. The façade turns it into its `EventReport` (the issue as an `IssueReport`); this layer keeps the
/// stored form, written with the catalog's own JSON writer because an import appends one per issue.
///
/// ```
/// {"cursor":12,"id":"…","kind":"issue.available","time":"2026-11-20T06:00:00.000Z","issue":{record}}
/// ```
package struct CatalogEvent: Sendable, Hashable {
    /// What happened. Raw values are the stable names consumers filter on.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case issueAdded = "issue.added"
        case issueAvailable = "issue.available"
        case issueFailed = "issue.failed"
        case issueRemoved = "issue.removed"
        case subscriptionAdded = "subscription.added"
        case subscriptionFailing = "subscription.failing"
        case subscriptionGone = "subscription.gone"
        case subscriptionMoved = "subscription.moved"
        case libraryLowSpace = "library.low-space"
    }

    /// The subscription an event names (its record belongs to a higher layer).
    package struct SubscriptionIdentity: Sendable, Hashable {
        package var id: String
        package var name: String
        package var url: String
        package init(id: String, name: String, url: String) {
            self.id = id
            self.name = name
            self.url = url
        }
    }

    /// Position in the log: strictly increasing, never reused (gaps are allowed).
    package var cursor: Int64
    /// The idempotency key: a UUID, the same on every delivery of this event.
    package var id: String
    package var time: Date
    package var kind: Kind
    /// `remove` or `prune` for `issue.removed`; the reason of a failing subscription.
    package var reason: String?
    /// The issue after the change (before it, for a removal).
    package var issue: Issue?
    package var subscription: SubscriptionIdentity?
    /// A free-text detail: the earlier URL of a moved subscription, the free bytes of a low-space event.
    package var detail: String?

    package init(
        kind: Kind, issue: Issue? = nil, subscription: SubscriptionIdentity? = nil, reason: String? = nil,
        detail: String? = nil, time: Date = Date()
    ) {
        self.cursor = 0
        self.id = UUID().uuidString.lowercased()
        self.time = time
        self.kind = kind
        self.reason = reason
        self.issue = issue
        self.subscription = subscription
        self.detail = detail
    }

    /// The event's line, with its newline. JSONWriter escapes tabs and newlines inside strings, so a line
    /// never holds either raw (the intent relies on it).
    package func encoded() -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.raw("{\"cursor\":")
        w.integer(cursor)
        w.key("id")
        w.string(id)
        w.key("kind")
        w.string(kind.rawValue)
        w.key("time")
        w.string(time.formatted(CatalogEvent.timeStyle))
        if let reason {
            w.key("reason")
            w.string(reason)
        }
        if let detail {
            w.key("detail")
            w.string(detail)
        }
        if let subscription {
            w.key("subscription")
            w.raw("{\"id\":")
            w.string(subscription.id)
            w.key("name")
            w.string(subscription.name)
            w.key("url")
            w.string(subscription.url)
            w.raw("}")
        }
        if let issue {
            w.key("issue")
            issue.write(to: &w)
        }
        w.raw("}\n")
        return w.bytes
    }

    static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Reads one stored line (without its newline).
    /// - Throws: `.manifestUnreadable` naming `path` when the line is not an event.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws -> CatalogEvent {
        do {
            guard case .object(let object) = try JSONReader.parse(bytes) else {
                throw CatalogShapeError("an event is not an object")
            }
            guard case .integer(let cursor)? = object["cursor"] else { throw CatalogShapeError("cursor is missing") }
            let kindText = try object.string("kind", at: "event")
            guard let kind = Kind(rawValue: kindText) else {
                throw CatalogShapeError("event kind \(kindText.debugDescription) is unknown")
            }
            let timeText = try object.string("time", at: "event")
            guard let time = try? Date(timeText, strategy: timeStyle) else {
                throw CatalogShapeError("event time \(timeText.debugDescription) is not ISO 8601")
            }
            var event = CatalogEvent(
                kind: kind, reason: try object.optionalString("reason", at: "event"),
                detail: try object.optionalString("detail", at: "event"), time: time)
            event.cursor = cursor
            event.id = try object.string("id", at: "event")
            if case .object(let subscription)? = object["subscription"] {
                event.subscription = SubscriptionIdentity(
                    id: try subscription.string("id", at: "event.subscription"),
                    name: try subscription.string("name", at: "event.subscription"),
                    url: try subscription.string("url", at: "event.subscription"))
            }
            if let issue = object["issue"], issue != .null { event.issue = try Issue(json: issue, at: "event.issue") }
            return event
        } catch let error as NewsstandError {
            throw error
        } catch {
            throw NewsstandError(
                .manifestUnreadable, "\(path) holds a line that is not an event (\(error)); it was left untouched",
                underlying: error)
        }
    }
}
