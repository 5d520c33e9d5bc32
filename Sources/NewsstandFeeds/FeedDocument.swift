import Foundation

/// The formats a subscription reads, detected from the body's content.
public enum FeedFormat: String, Sendable, Hashable, CaseIterable {
    /// RSS 2.0 (with the iTunes podcast namespace where present).
    case rss
    /// Atom 1.0.
    case atom
    /// JSON Feed 1.0 / 1.1.
    case jsonFeed = "json-feed"
    /// The issues catalog: `{"publication", "issues": [...]}`, the format `issues export` writes.
    case catalog
    /// A publisher's own JSON, read through a ``FeedMapping``.
    case mapped
}

/// What a feed says, whatever its format: the one output of ``FeedParser``.
package struct FeedDocument: Sendable, Equatable {
    package var format: FeedFormat
    /// The feed's own title (RSS `channel/title`, Atom `feed/title`, JSON Feed `title`, the catalog's
    /// `publication`), used as the subscription's default name.
    package var title: String?
    /// The items in document order.
    package var items: [FeedItem]
    /// Where the publisher says the feed now lives (`itunes:new-feed-url`, a JSON Feed's `feed_url`
    /// when it differs from where it was fetched), resolved against the feed URL.
    package var movedTo: URL?
    /// The channel's Podcasting 2.0 `podcast:guid`: the show's identity wherever the feed lives, so a feed
    /// that moved to another URL is still recognised as the same subscription.
    package var podcastGUID: String? = nil
    /// RSS `ttl`: how many minutes the publisher asks readers to wait between checks.
    package var ttlMinutes: Int? = nil
    /// The channel's image (RSS `image/url`, `itunes:image`; Atom `logo`, else `icon`; JSON Feed `icon`): the
    /// cover of an item that has no image of its own (``FeedParser`` fills it in).
    package var image: URL? = nil
}

/// One item of a feed: the future issue.
package struct FeedItem: Sendable, Equatable {
    /// The feed's own identifier (RSS `guid`, Atom `id`, JSON Feed `id`, a catalog's `id`, the
    /// mapping's identifier), trimmed; nil when the item has none.
    package var id: String?
    /// The item's title: the issue name's source (a catalog's `name`, the mapping's name template).
    package var title: String?
    /// When the item was published (UTC); nil when the feed gives no date that parses.
    package var date: Date?
    /// The item's files (RSS `enclosure`, Atom `link rel="enclosure"`, JSON Feed `attachments`, a
    /// catalog's `assets`, the mapping's asset templates), absolute, http or https only.
    package var assets: [FeedAsset]
    /// Files that go with the item's media (Podcasting 2.0: the preferred `podcast:transcript`, then
    /// `podcast:chapters`): extra assets of its issue, never unpacked, and never part of the item's identity
    /// (which ``assets`` gives), so a feed that adds a transcript later does not make a new item.
    package var extras: [FeedAsset] = []
    /// The renditions of the item's media a subscription's policy chooses among (``assets`` is what the
    /// default takes): each `enclosure`, then each `podcast:alternateEnclosure` (its first usable
    /// `podcast:source`), in document order, one URL once; empty when there are fewer than two.
    package var variants: [FeedAsset] = []
    /// The item's image, its issue's cover (`itunes:image`, `media:thumbnail`, an image `media:content`, JSON
    /// Feed `image`/`banner_image`, a mapping's `image` template), else the channel's; never part of the
    /// item's identity.
    package var image: URL? = nil
    /// The item's web page (RSS `link`, Atom `link rel="alternate"`, JSON Feed `url`), for the sidecar.
    package var link: String? = nil
    /// The item's description as text (RSS `description`, Atom `summary`, JSON Feed `summary`), for the sidecar.
    package var summary: String? = nil
}

/// One file of a feed item.
package struct FeedAsset: Sendable, Equatable {
    package var url: URL
    /// The SHA-256 the feed gives (catalog format only), lowercased hex.
    package var sha256: String?
    /// Whether to unpack it (catalog format only); nil means the library's default.
    package var unpack: Bool?
    /// The length the feed announces, when it does (never trusted, only shown).
    package var length: Int64?
    /// The MIME type the feed announces, when it does.
    package var mimeType: String?
}

/// What a fetched body turned out to be.
package enum FeedParseResult: Sendable, Equatable {
    /// A feed in one of the formats.
    case feed(FeedDocument)
    /// An HTML page; `alternates` are its `<link rel="alternate">` feed URLs (RSS, Atom, JSON Feed),
    /// resolved against the page's URL, in document order.
    case html(alternates: [URL])
}

/// The safety caps of feed parsing (the SPEC's "Safety" rules).
package struct FeedLimits: Sendable, Equatable {
    /// The largest body read, in bytes (32 MiB).
    package var maxBodyBytes: Int = 32 << 20
    /// The longest text field kept (title, id); longer ones are cut at a character boundary.
    package var maxFieldBytes: Int = 4096
    /// The longest URL accepted; longer ones drop the asset.
    package var maxURLBytes: Int = 8192
    /// The most items read from one feed; the rest are ignored.
    package var maxItems: Int = 100_000
    /// The most assets kept per item.
    package var maxAssetsPerItem: Int = 64

    package init() {}
}
