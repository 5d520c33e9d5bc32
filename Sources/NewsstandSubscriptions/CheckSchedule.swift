import Foundation
import NewsstandCore

/// What a feed and its server said about when to ask again.
public struct FeedHints: Sendable, Hashable {
    /// Why the server's earliest next check is what it is.
    public enum ServerReason: String, Sendable, Hashable, Codable {
        /// `Cache-Control: max-age` or `Expires` on the last answer.
        case fresh = "cache"
        /// `Retry-After` on a 429 or 503.
        case retryAfter = "retry-after"
    }

    /// RSS `ttl` of the last body read, in minutes.
    public var ttlMinutes: Int?
    /// The server's earliest next check, and why.
    public var notBefore: Date?
    public var notBeforeReason: ServerReason?

    public init(ttlMinutes: Int? = nil, notBefore: Date? = nil, notBeforeReason: ServerReason? = nil) {
        self.ttlMinutes = ttlMinutes
        self.notBefore = notBefore
        self.notBeforeReason = notBeforeReason
    }
}

/// When a subscription is checked next, and why: the scheduler's rule, in one pure function so that
/// `issues schedule` shows exactly what the service does.
///
/// The interval adapts to how often the feed publishes (a week divided by its items per week over the
/// last four weeks, clamped between 15 minutes and a day, Miniflux's rule) unless `configure --every`
/// sets it. A failing feed backs off instead: 15 minutes doubled per failure in a row, with up to 20 %
/// jitter so that feeds failing together do not retry together, capped at a day. The feed's `ttl` and
/// the server's `Cache-Control`, `Expires` and `Retry-After` only ever push the time later.
public struct CheckPlan: Sendable, Hashable {
    public enum Reason: String, Sendable, Hashable, Codable {
        /// Never checked since it was added: due at once.
        case firstCheck = "first check"
        /// A week divided by the feed's items per week.
        case adaptive
        /// `configure --every`.
        case every
        /// The feed's `ttl`.
        case ttl
        /// The server's `Cache-Control`, `Expires` or `Retry-After`.
        case serverAsked = "server asked"
        /// The last checks failed.
        case backoff
        /// Paused: checked only when named (`issues sync NAME`).
        case paused
        /// The feed answered 410 Gone.
        case gone
    }

    /// When the next check is due; nil for a paused or gone subscription.
    public var due: Date?
    public var reason: Reason
    /// The interval the rule chose (before the feed's and server's hints).
    public var interval: Duration?
    /// One line for people: "2.0 items a week → every 3d 12h", "3 failures → in 2h".
    public var explanation: String

    public static let shortest: Duration = .seconds(15 * 60)
    public static let longest: Duration = .seconds(86_400)
    static let week: Double = 7 * 86_400

    /// The plan for `subscription` as of `now`.
    public static func plan(for subscription: Subscription, now: Date) -> CheckPlan {
        if subscription.isGone {
            return CheckPlan(due: nil, reason: .gone, interval: nil, explanation: "the feed answered 410 Gone; unpause to check again")
        }
        if subscription.isPaused {
            return CheckPlan(due: nil, reason: .paused, interval: nil, explanation: "paused; `issues unpause` to resume")
        }
        guard let last = subscription.lastChecked else {
            return CheckPlan(due: now, reason: .firstCheck, interval: nil, explanation: "never checked")
        }
        var plan: CheckPlan
        if subscription.failures > 0 {
            let interval = backoff(failures: subscription.failures, id: subscription.id)
            plan = CheckPlan(
                due: last + interval.timeInterval, reason: .backoff, interval: interval,
                explanation: "\(subscription.failures) failed check\(subscription.failures == 1 ? "" : "s") in a row → \(interval.shortText) after the last")
        } else if let every = subscription.checkEvery {
            plan = CheckPlan(due: last + every.timeInterval, reason: .every, interval: every, explanation: "every \(every.shortText) (configured)")
        } else {
            let perWeek = itemsPerWeek(subscription.items, now: now)
            let interval = adaptiveInterval(itemsPerWeek: perWeek)
            plan = CheckPlan(
                due: last + interval.timeInterval, reason: .adaptive, interval: interval,
                explanation: String(format: "%.1f items a week → every %@", perWeek, interval.shortText))
        }
        if let ttl = subscription.hints.ttlMinutes, let due = plan.due {
            let ttlDue = last + TimeInterval(ttl * 60)
            if ttlDue > due {
                plan.due = ttlDue
                plan.reason = .ttl
                plan.explanation += "; the feed's ttl asks for \(Duration.seconds(ttl * 60).shortText)"
            }
        }
        if let notBefore = subscription.hints.notBefore, let due = plan.due, notBefore > due {
            plan.due = notBefore
            plan.reason = .serverAsked
            switch subscription.hints.notBeforeReason {
            case .retryAfter?: plan.explanation += "; the server asked to wait (Retry-After)"
            default: plan.explanation += "; the server's answer stays fresh until then (Cache-Control/Expires)"
            }
        }
        return plan
    }

    /// Items per week over the four weeks before `now`, by each item's date (else when it was first seen).
    static func itemsPerWeek(_ items: [SubscriptionItem], now: Date) -> Double {
        let today = IssueDate.utc(now)
        let start = IssueDate.utc(now - 28 * 86_400)
        var count = 0
        for item in items {
            let day = item.date ?? item.firstSeen
            if day > start && day <= today { count += 1 }
        }
        return Double(count) / 4
    }

    static func adaptiveInterval(itemsPerWeek: Double) -> Duration {
        guard itemsPerWeek > 0 else { return longest }
        let seconds = min(max(week / itemsPerWeek, shortest.timeInterval), longest.timeInterval)
        return .seconds(Int64(seconds))
    }

    /// 15 minutes × 2^(failures − 1) × (1 + jitter), jitter in [0, 0.2) from the subscription and the count,
    /// so it is the same each time it is computed (what `schedule` shows is what the service does).
    static func backoff(failures: Int, id: String) -> Duration {
        let base = Backoff.step(failures: failures, first: shortest.timeInterval, cap: longest.timeInterval)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs, unlike Hasher
        for byte in "\(id)/\(failures)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let jitter = Double(hash % 1000) / 5000
        return .seconds(Int64(min(base * (1 + jitter), longest.timeInterval)))
    }
}
