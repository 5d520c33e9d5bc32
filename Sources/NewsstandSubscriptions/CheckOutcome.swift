import Foundation

/// How a subscription's last check went, as `subscriptions`, `schedule` and the server show it and as
/// `.sync/ID.json` keeps it (its ``description``: `subscribed`, `unchanged`, `updated, 3 new`, `failed: MESSAGE`).
public enum CheckOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The first read, by `subscribe`.
    case subscribed
    /// The feed had not changed (304, or the same body).
    case unchanged
    /// The feed was read and merged; `newIssues` items became issues.
    case updated(newIssues: Int)
    /// The check failed, with the message the CLI prints after `error: `.
    case failed(message: String)

    public var description: String {
        switch self {
        case .subscribed: return "subscribed"
        case .unchanged: return "unchanged"
        case .updated(let count): return "updated, \(count) new"
        case .failed(let message): return "failed: \(message)"
        }
    }

    public var isFailure: Bool {
        if case .failed = self { return true }
        return false
    }

    /// Reads what ``description`` wrote. A text of another shape (an older or newer version's) reads as a
    /// failure carrying it, so that it is shown as it was and a backoff is not forgotten.
    package init(text: String) {
        if text == "subscribed" {
            self = .subscribed
        } else if text == "unchanged" {
            self = .unchanged
        } else if text.hasPrefix("failed: ") {
            self = .failed(message: String(text.dropFirst(8)))
        } else if text.hasPrefix("updated, "), text.hasSuffix(" new"),
            let count = Int(text.dropFirst(9).dropLast(4)), count >= 0
        {
            self = .updated(newIssues: count)
        } else {
            self = .failed(message: text)
        }
    }
}
