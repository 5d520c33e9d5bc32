import Foundation
import NewsstandCore
import NewsstandFeeds

/// A publisher's feed that turns into dated issues by itself: what NewsstandKit's apps asked their
/// own server for, for any publisher. Read with ``Library/subscriptions()``; change through `Library`.
public struct Subscription: Sendable, Hashable, Identifiable {
    /// A stable identifier (16 hex digits), kept across renames and moves; issues point to it.
    public let id: String
    /// The name shown and typed (`issues sync NAME`); unique in the library, case-insensitively.
    public package(set) var name: String
    /// Where the feed is fetched from (updated when the publisher moves it for good).
    public package(set) var url: URL
    /// The format of the feed's last body that parsed.
    public package(set) var format: FeedFormat?
    /// The newest issues of this subscription to keep; older ones are pruned by `sync`. Nil keeps all.
    public package(set) var keep: Int?
    /// Whether `sync` downloads the new issues' assets.
    public package(set) var downloadsAutomatically: Bool
    /// A paused subscription is skipped by `sync` unless named.
    public package(set) var isPaused: Bool
    /// The feed answered 410 Gone; the subscription was paused then.
    public package(set) var isGone: Bool
    /// When the subscription was made.
    public package(set) var created: Date
    /// Earlier URLs of the feed, oldest first.
    public package(set) var previousURLs: [URL]
    /// The show's Podcasting 2.0 `podcast:guid`, from the last body merged: a feed at another URL with the
    /// same value is this subscription moved, not a new one.
    public package(set) var podcastGUID: String? = nil
    /// Which rendition of each item's media becomes an asset when the feed offers several.
    public package(set) var mediaPolicy = MediaPolicy()
    /// When `sync` last checked the feed, and what came of it (kept beside the catalog, not in it, so
    /// that an unchanged feed writes nothing to the catalog).
    public package(set) var lastChecked: Date?
    public package(set) var lastOutcome: CheckOutcome?
    /// Checks that failed in a row since the last that did not (the scheduler backs off on them).
    public package(set) var failures: Int = 0
    /// What the feed and its server last said about when to ask again (kept with the last-checked status).
    public package(set) var hints = FeedHints()
    /// How often the scheduler checks the feed, when set by `configure --every`; else it adapts to how
    /// often the feed publishes.
    public package(set) var checkEvery: Duration? = nil
    /// How its new issues are filed (`subscribe`/`configure --template`); nil for the library's default. Issues
    /// already added keep where they are.
    public package(set) var template: LayoutTemplate? = nil
    /// The validators of the last body, sent with the next request.
    package var etag: String?
    package var lastModified: String?
    /// SHA-256 of the last body merged: an unchanged body writes nothing.
    package var bodyDigest: String?
    /// The mapping, as its JSON text, for a subscription of a publisher's own JSON API.
    package var mappingJSON: String?
    /// Every item seen in the feed, added as an issue or not.
    package var items: [SubscriptionItem]

    /// How many feed items are known (added as issues or only seen).
    public var itemsSeen: Int { items.count }
    /// The names of the issues this subscription added (some may since have been pruned or removed).
    public var issueNames: [String] { items.compactMap(\.issueName) }
    /// How many of them are still in the library, when counted (``Library/subscriptions(countingIssues:)``).
    public package(set) var issuesHeld: Int?
    /// Whether a mapping reads this subscription's JSON.
    public var isMapped: Bool { mappingJSON != nil }

    package init(id: String, name: String, url: URL, format: NewsstandFeeds.FeedFormat? = nil, keep: Int? = nil, downloadsAutomatically: Bool, isPaused: Bool, isGone: Bool, created: Date, previousURLs: [URL], lastChecked: Date? = nil, lastOutcome: CheckOutcome? = nil, etag: String? = nil, lastModified: String? = nil, bodyDigest: String? = nil, mappingJSON: String? = nil, items: [NewsstandSubscriptions.SubscriptionItem], issuesHeld: Int? = nil) {
        self.id = id
        self.name = name
        self.url = url
        self.format = format
        self.keep = keep
        self.downloadsAutomatically = downloadsAutomatically
        self.isPaused = isPaused
        self.isGone = isGone
        self.created = created
        self.previousURLs = previousURLs
        self.lastChecked = lastChecked
        self.lastOutcome = lastOutcome
        self.etag = etag
        self.lastModified = lastModified
        self.bodyDigest = bodyDigest
        self.mappingJSON = mappingJSON
        self.items = items
        self.issuesHeld = issuesHeld
    }
}

/// One feed item a subscription has seen, with what identifies it across feed changes.
package struct SubscriptionItem: Sendable, Hashable {
    /// The item's identity: its feed id, else its enclosure URL without the query, else title + date.
    package var id: String
    /// Earlier identities of the same item (when the feed changed its id).
    var aliases: [String] = []
    /// The first asset's URL without query or fragment, for matching an item whose id changed.
    var enclosure: String?
    /// Title and date, for matching an item whose id and enclosure both changed.
    var titleDate: String?
    /// The issue made from it; nil when the item was only seen (older than the initial selection).
    package var issueName: String?
    /// The item's asset URLs as the feed last gave them (signed links are re-read from here).
    var assetURLs: [String] = []
    /// The item's date, when the feed gives one.
    package var date: IssueDate?
    /// When it was first seen.
    package var firstSeen: IssueDate
    /// How it was last recognised.
    package var matchedBy: Issue.ItemMatch = .id

    package init(
        id: String, aliases: [String] = [], enclosure: String? = nil, titleDate: String? = nil, issueName: String? = nil,
        assetURLs: [String] = [], date: IssueDate? = nil, firstSeen: IssueDate, matchedBy: Issue.ItemMatch = .id
    ) {
        self.id = id
        self.aliases = aliases
        self.enclosure = enclosure
        self.titleDate = titleDate
        self.issueName = issueName
        self.assetURLs = assetURLs
        self.date = date
        self.firstSeen = firstSeen
        self.matchedBy = matchedBy
    }
}

/// What to do with a new subscription's existing items.
public enum InitialItems: Sendable, Hashable {
    /// The newest N items become issues; the rest are remembered as seen.
    case newest(Int)
    /// Every item becomes an issue.
    case all
    /// Items dated on or after this day become issues.
    case since(IssueDate)
}

/// The options of ``Library/subscribe(to:options:)``.
public struct SubscribeOptions: Sendable {
    /// The subscription's name; the feed's title when nil.
    public var name: String?
    /// A mapping (its JSON) for a publisher's own JSON API.
    public var mapping: Data?
    /// Which of the feed's current items become issues.
    public var initial: InitialItems
    /// How many of the newest issues to keep; nil keeps all.
    public var keep: Int?
    /// Whether `sync` downloads new issues' assets.
    public var downloadsAutomatically: Bool
    /// Request headers sent with every fetch of the feed (a cookie, a token): stored in the library's 0600
    /// credentials file, never shown in full, and (`Authorization`, `Cookie`) sent to the feed's own origin
    /// only, as an asset's headers are.
    public var headers: [String: String]
    /// Which rendition of each item's media to take when the feed offers several.
    public var mediaPolicy = MediaPolicy()
    /// How the subscription's issues are filed; nil for the library's default.
    public var template: LayoutTemplate? = nil

    public init(
        name: String? = nil, mapping: Data? = nil, initial: InitialItems = .newest(1), keep: Int? = nil,
        downloadsAutomatically: Bool = true, headers: [String: String] = [:]
    ) {
        self.name = name
        self.mapping = mapping
        self.initial = initial
        self.keep = keep
        self.downloadsAutomatically = downloadsAutomatically
        self.headers = headers
    }
}

/// A change to a subscription's options (``Library/changeSubscription(named:_:)``); nil fields stay.
public struct SubscriptionChange: Sendable {
    public var name: String?
    /// `.some(nil)` keeps every issue.
    public var keep: Int??
    public var downloadsAutomatically: Bool?
    public var isPaused: Bool?
    /// `.some(nil)` drops the mapping.
    public var mapping: Data??
    /// The preferred media type; `.some(nil)` drops it. Applies to items that become issues from now on.
    public var preferredType: String?? = nil
    /// The largest rendition taken; `.some(nil)` drops the limit.
    public var maxBytes: Int64?? = nil
    /// How often the scheduler checks the feed; `.some(nil)` goes back to adapting to the feed.
    public var checkEvery: Duration?? = nil
    /// How new issues are filed; `.some(nil)` goes back to the library's default. Existing issues stay.
    public var template: LayoutTemplate?? = nil

    public init(
        name: String? = nil, keep: Int?? = nil, downloadsAutomatically: Bool? = nil, isPaused: Bool? = nil,
        mapping: Data?? = nil
    ) {
        self.name = name
        self.keep = keep
        self.downloadsAutomatically = downloadsAutomatically
        self.isPaused = isPaused
        self.mapping = mapping
    }
}

/// What one subscription's refresh did.
public struct SyncReport: Sendable {
    public enum Outcome: Sendable {
        /// 304, or a body identical to the last one: nothing was written.
        case unchanged
        /// The feed was read and merged.
        case updated
        /// The refresh failed; the subscription is as it was (a 410 also pauses it).
        case failed(NewsstandError)
    }

    /// The subscription's name (after any rename).
    public var subscription: String
    public var outcome: Outcome
    /// Whether the subscription's new issues are to be downloaded (its `downloadsAutomatically`).
    public var downloadsNewIssues = true
    /// Issues added by this refresh, newest first.
    public var addedIssues: [String] = []
    /// Issues whose asset URLs the feed changed (a rotated query, a re-signed link).
    public var updatedIssues: [String] = []
    /// Items recognised under a changed id, by enclosure or title and date.
    public var rematchedItems: Int = 0
    /// Items seen for the first time but not added (older than the initial selection).
    public var seenOnly: Int = 0
    /// Set when the feed moved for good (a permanent redirect, `itunes:new-feed-url`, `feed_url`).
    public var movedTo: URL?
    /// Issues pruned by the subscription's `keep`.
    public var prunedIssues: [String] = []
    /// Known issues given an extra file the feed added later (a transcript published after the episode):
    /// downloaded with the new issues.
    public var extendedIssues: [String] = []
    /// Notes worth showing (an HTML page followed to its feed, items skipped for having no identity).
    public var notes: [String] = []
    /// What the feed and its server said about the next check (kept with the last-checked status).
    package var hints = FeedHints()

    /// The added issues still in the library after the subscription's `keep` pruned it: what to download.
    public var keptIssues: [String] {
        let pruned = Set(prunedIssues)
        return addedIssues.filter { !pruned.contains($0) } + extendedIssues.filter { !pruned.contains($0) }
    }

    var failed: Bool {
        if case .failed = outcome { return true }
        return false
    }

    package init(subscription: String, outcome: NewsstandSubscriptions.SyncReport.Outcome, downloadsNewIssues: Bool = true, addedIssues: [String] = [], updatedIssues: [String] = [], rematchedItems: Int = 0, seenOnly: Int = 0, movedTo: URL? = nil, prunedIssues: [String] = [], notes: [String] = []) {
        self.subscription = subscription
        self.outcome = outcome
        self.downloadsNewIssues = downloadsNewIssues
        self.addedIssues = addedIssues
        self.updatedIssues = updatedIssues
        self.rematchedItems = rematchedItems
        self.seenOnly = seenOnly
        self.movedTo = movedTo
        self.prunedIssues = prunedIssues
        self.notes = notes
    }
}
