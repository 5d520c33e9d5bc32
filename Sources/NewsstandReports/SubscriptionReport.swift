import Foundation
import NewsstandCore
import NewsstandFeeds
import NewsstandSubscriptions

/// The machine-readable shape of one subscription (`subscriptions --json`, the coming API): its name, URL,
/// format, policies, counts and last check. The items seen are not listed (a feed may have thousands).
public struct SubscriptionReport: Codable, Sendable, Hashable {
    public var reportVersion: Int = IssueReport.reportVersion
    public var id: String
    public var name: String
    public var url: String
    /// Earlier URLs of the feed, oldest first.
    public var previousURLs: [String]
    /// `rss`, `atom`, `json`, `catalog` or `mapped`; null until a body parsed.
    public var format: String?
    public var mapped: Bool
    public var download: Bool
    public var keep: Int?
    public var paused: Bool
    public var gone: Bool
    /// Issues still held (null unless counted); `issuesAdded` counts all it ever added.
    public var issues: Int?
    public var issuesAdded: Int
    public var itemsSeen: Int
    /// ISO 8601, null before the first check.
    public var lastChecked: String?
    public var lastOutcome: String?
    /// The layout template its new issues are filed by; null for the library's default.
    public var template: String?

    private enum CodingKeys: String, CodingKey {
        case reportVersion, id, name, url, previousURLs, format, mapped, download, keep, paused, gone, issues
        case issuesAdded, itemsSeen, lastChecked, lastOutcome, template
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(reportVersion, forKey: .reportVersion)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(url, forKey: .url)
        try c.encode(previousURLs, forKey: .previousURLs)
        try c.encode(mapped, forKey: .mapped)
        try c.encode(download, forKey: .download)
        try c.encode(paused, forKey: .paused)
        try c.encode(gone, forKey: .gone)
        try c.encode(issuesAdded, forKey: .issuesAdded)
        try c.encode(itemsSeen, forKey: .itemsSeen)
        // Unknowns are written as null, never left out: a script reads every key on every subscription.
        try c.encode(format, forKey: .format)
        try c.encode(keep, forKey: .keep)
        try c.encode(issues, forKey: .issues)
        try c.encode(lastChecked, forKey: .lastChecked)
        try c.encode(lastOutcome, forKey: .lastOutcome)
        try c.encode(template, forKey: .template)
    }
}

extension SubscriptionReport {
    package init(_ subscription: Subscription) {
        id = subscription.id
        name = subscription.name
        url = subscription.url.absoluteString
        previousURLs = subscription.previousURLs.map(\.absoluteString)
        format = subscription.format?.rawValue
        mapped = subscription.isMapped
        download = subscription.downloadsAutomatically
        keep = subscription.keep
        paused = subscription.isPaused
        gone = subscription.isGone
        issues = subscription.issuesHeld
        issuesAdded = subscription.issueNames.count
        itemsSeen = subscription.itemsSeen
        lastChecked = subscription.lastChecked?.formatted(.iso8601)
        lastOutcome = subscription.lastOutcome?.description
        template = subscription.template?.text
    }
}
