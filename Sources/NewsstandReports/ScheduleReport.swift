import Foundation
import NewsstandCore
import NewsstandSubscriptions

/// The machine-readable shape of one subscription's schedule (`schedule --json`, the API): its last check
/// and outcome, its next check and the reason for that time.
public struct ScheduleReport: Codable, Sendable, Hashable {
    public var reportVersion: Int = IssueReport.reportVersion
    public var id: String
    public var name: String
    /// ISO 8601; null before the first check.
    public var lastChecked: String?
    public var lastOutcome: String?
    /// Failed checks in a row.
    public var failures: Int
    /// ISO 8601; null for a paused or gone subscription.
    public var nextCheck: String?
    /// `first check`, `adaptive`, `every`, `ttl`, `server asked`, `backoff`, `paused` or `gone`.
    public var reason: String
    /// The interval the rule chose, in seconds (before the feed's and server's hints); null when none.
    public var intervalSeconds: Int64?
    /// The reason in words.
    public var explanation: String

    private enum CodingKeys: String, CodingKey {
        case reportVersion, id, name, lastChecked, lastOutcome, failures, nextCheck, reason, intervalSeconds, explanation
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(reportVersion, forKey: .reportVersion)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        // Unknowns are written as null, never left out, as the other reports do.
        try c.encode(lastChecked, forKey: .lastChecked)
        try c.encode(lastOutcome, forKey: .lastOutcome)
        try c.encode(failures, forKey: .failures)
        try c.encode(nextCheck, forKey: .nextCheck)
        try c.encode(reason, forKey: .reason)
        try c.encode(intervalSeconds, forKey: .intervalSeconds)
        try c.encode(explanation, forKey: .explanation)
    }
}

extension ScheduleReport {
    package init(_ subscription: Subscription, plan: CheckPlan) {
        id = subscription.id
        name = subscription.name
        lastChecked = subscription.lastChecked?.formatted(.iso8601)
        lastOutcome = subscription.lastOutcome?.description
        failures = subscription.failures
        nextCheck = plan.due?.formatted(.iso8601)
        reason = plan.reason.rawValue
        intervalSeconds = plan.interval?.components.seconds
        explanation = plan.explanation
    }
}
