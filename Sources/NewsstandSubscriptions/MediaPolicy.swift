import Foundation
import NewsstandFeeds

/// Which rendition of an item's media a subscription takes when the feed offers several (several
/// `enclosure`s, `podcast:alternateEnclosure`): `subscribe --prefer`, `--max-bytes`. The default takes
/// what it always took (every enclosure), so setting nothing changes nothing.
public struct MediaPolicy: Sendable, Hashable {
    /// A MIME type (`audio/opus`) or a prefix ending in `/` (`audio/`) the chosen rendition should have.
    public var preferredType: String?
    /// Renditions whose announced length is larger are skipped (an unknown length is not).
    public var maxBytes: Int64?

    public init(preferredType: String? = nil, maxBytes: Int64? = nil) {
        self.preferredType = preferredType.flatMap(MediaPolicy.normalized)
        self.maxBytes = maxBytes
    }

    /// Whether nothing is set: the item's own assets are taken as they are.
    public var isDefault: Bool { preferredType == nil && maxBytes == nil }

    /// `audio/*` is written as the prefix `audio/`; lowercased, parameters dropped; nil when not a type or prefix.
    public static func normalized(_ text: String) -> String? {
        var type = text.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        type = type.trimmingCharacters(in: .whitespaces).lowercased()
        if type.hasSuffix("/*") { type.removeLast() }
        let parts = type.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, type.count <= 255,
            type.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "*" && $0 != "," })
        else { return nil }
        return type
    }

    func accepts(_ mimeType: String?) -> Bool {
        guard let preferredType else { return true }
        guard let type = mimeType.flatMap(MediaPolicy.normalized) else { return false }
        return preferredType.hasSuffix("/") ? type.hasPrefix(preferredType) : type == preferredType
    }

    /// The files of `item` to make its issue's media from.
    ///
    /// With the default, or when the feed offers one rendition, the item's assets. Otherwise one rendition:
    /// the one already held (`held`, the URLs the item's issue was made with, compared without query) so that
    /// a known item never switches to another copy of the same media; else the first that fits `maxBytes`
    /// and has the preferred type; else the first that fits; none when none fits.
    package func assets(for item: FeedItem, held: [String] = []) -> [FeedAsset] {
        guard !isDefault, !item.variants.isEmpty else { return item.assets }
        let heldKeys = Set(held.compactMap { URL(string: $0).flatMap(FeedIdentity.enclosureKey) })
        if let same = item.variants.first(where: { FeedIdentity.enclosureKey($0.url).map(heldKeys.contains) ?? false }) {
            return [same]
        }
        let fitting = item.variants.filter { variant in
            guard let maxBytes, let length = variant.length else { return true }
            return length <= maxBytes
        }
        if let preferred = fitting.first(where: { accepts($0.mimeType) }) { return [preferred] }
        return fitting.first.map { [$0] } ?? []
    }
}
