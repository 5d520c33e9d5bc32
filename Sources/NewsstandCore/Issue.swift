import Foundation

/// One issue of a publication: a unique name, a date and its assets (NewsstandKit's `NKIssue`).
///
/// A value snapshot; change issues through `Library`. Its JSON form is the catalog's one schema
/// (`Catalog/IssueRecord.swift`), written by ``Library/json(for:)``; there is no second `Codable` form.
public struct Issue: Sendable, Hashable, Identifiable {
    /// NewsstandKit's `NKIssueContentStatus`, plus `failed`. Kept in the catalog, never guessed from
    /// what a folder holds.
    public enum Status: String, Codable, Sendable, Hashable, CaseIterable {
        /// No asset fetched yet and none in flight.
        case none
        /// Some asset is in flight, or some are fetched and others still pending.
        case downloading
        /// Every asset is downloaded, verified and, if an archive, unpacked.
        case available
        /// An asset gave up; its error is kept on the asset.
        case failed
    }

    /// The unique name, e.g. "The Daily 2026-11-20".
    public let name: String
    /// The issue's cover date.
    public var date: IssueDate
    /// The content folder's path inside the library: one safe path component, unique in the library; or,
    /// for an issue filed by a layout template (``fileStem`` set), the folder it shares with others, one or
    /// more safe components (`Podcast`, `Podcast/2026`).
    public let folderName: String
    /// For an issue filed by a layout template: the name its files take in ``folderName`` before their
    /// extension (`2026-11-20 Title` → `2026-11-20 Title.mp3`), chosen and recorded when the issue is added,
    /// unique in the library. Nil for an issue with a folder of its own (the default).
    public let fileStem: String?
    /// The issue's status, derived from its assets whenever they change and stored with them.
    public package(set) var status: Status
    /// The issue's assets, in the order they were added.
    public package(set) var assets: [AssetDownload]
    /// Set while `remove` is under way, so that a crash mid-removal leaves the issue listed, not orphaned.
    public package(set) var isBeingRemoved: Bool
    /// A pinned issue is never pruned (NewsstandKit's `currentlyReadingIssue`, for as many as you like).
    public package(set) var isPinned: Bool
    /// The subscription and feed item this issue came from; nil for an issue added by hand.
    public package(set) var origin: Origin?
    /// The publication this issue belongs to, when it was given (`add --publication`, an import's
    /// `"publication"`); `prune --keep` otherwise groups by ``publicationName``.
    public package(set) var publication: String?

    /// What the feed said of the item this issue came from (kept for the issue's sidecar, `issue.json`);
    /// nil for an issue added by hand or made before it was kept.
    public package(set) var source: SourceItem?

    /// A feed item's own words: its title, link and description.
    public struct SourceItem: Sendable, Hashable {
        public var title: String?
        /// The item's web page (RSS `link`, Atom `link rel="alternate"`, JSON Feed `url`).
        public var link: String?
        /// The item's description or summary, as text.
        public var description: String?

        public init(title: String? = nil, link: String? = nil, description: String? = nil) {
            self.title = title
            self.link = link
            self.description = description
        }

        /// True when the feed said nothing worth keeping.
        public var isEmpty: Bool { title == nil && link == nil && description == nil }
    }

    /// Where a subscribed issue came from.
    public struct Origin: Sendable, Hashable {
        /// The subscription's identifier (stable across renames).
        public var subscriptionID: String
        /// The item's identity within the subscription (its feed id, else its enclosure URL without the
        /// query, else title + date).
        public var itemID: String
        /// How the item was last recognised (not by its id when the feed changed the item's id and the old
        /// one was kept as an alias).
        public var matchedBy: ItemMatch

        public init(subscriptionID: String, itemID: String, matchedBy: ItemMatch = .id) {
            self.subscriptionID = subscriptionID
            self.itemID = itemID
            self.matchedBy = matchedBy
        }
    }

    public var id: String { name }

    /// How a feed item was recognised as one already known; the raw values are what records and reports
    /// hold.
    public enum ItemMatch: String, Sendable, Hashable, Codable {
        /// By its feed id (guid, Atom id, JSON Feed id).
        case id
        /// By its enclosure URL without the query: the feed changed the item's id.
        case enclosure
        /// By its title and date: the feed changed the item's id and its enclosure.
        case titleDate = "title-date"
    }

    package init(name: String, date: IssueDate, folderName: String, fileStem: String? = nil) {
        self.name = name
        self.date = date
        self.folderName = folderName
        self.fileStem = fileStem
        self.status = .none
        self.assets = []
        self.isBeingRemoved = false
        self.isPinned = false
        self.origin = nil
        self.publication = nil
        self.source = nil
    }

    /// The assets that are the issue's content, and the first whose role is the cover's source: what every
    /// report shows apart (one rule for `show --json`, `list --json` and the HTTP API).
    package var assetsAndCoverSource: (content: [AssetDownload], cover: AssetDownload?) {
        guard let index = assets.firstIndex(where: { $0.role == .cover }) else { return (assets, nil) }
        var content = assets
        let cover = content.remove(at: index)
        return (content, cover)
    }

    /// Recomputes `status` from the asset states.
    package mutating func updateStatus() {
        status = Issue.status(of: assets)
    }

    static func status(of assets: [AssetDownload]) -> Status {
        guard !assets.isEmpty else { return .none }
        var anyInFlight = false
        var anyFailed = false
        var anyComplete = false
        var allComplete = true
        for asset in assets {
            // A downloaded archive still waiting to be unpacked is work in progress too.
            if asset.state == .downloading || (asset.state == .downloaded && !asset.isComplete) {
                anyInFlight = true
            }
            if asset.state == .failed { anyFailed = true }
            if asset.isComplete { anyComplete = true } else { allComplete = false }
        }
        if allComplete { return .available }
        if anyInFlight { return .downloading }
        if anyFailed { return .failed }
        return anyComplete ? .downloading : .none
    }
}
