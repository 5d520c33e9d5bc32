import Foundation
import NewsstandCore

/// JSON Feed 1.0 and 1.1 (jsonfeed.org) into a ``FeedDocument``: `title`, `feed_url` (as `movedTo` when
/// it is not where the feed was fetched); per item `id`, `title`, `date_published` (else
/// `date_modified`), every `attachments` entry (`url`, `mime_type`, `size_in_bytes`).
enum JSONFeedReader {
    /// True when `object` names a JSON Feed version: the spec's URL (`https://jsonfeed.org/version/1`,
    /// `…/1.1`), or a bare version number (`"1.1"`, as some generators write) beside an `items` array.
    static func isJSONFeed(_ object: [String: JSONValue]) -> Bool {
        guard case .string(let version)? = object["version"] else { return false }
        if version.hasPrefix("https://jsonfeed.org/version/") || version.hasPrefix("http://jsonfeed.org/version/") {
            return true
        }
        guard case .array? = object["items"], let major = version.split(separator: ".").first else { return false }
        return major == "1" && version.utf8.count <= 8 && version.utf8.allSatisfy { FeedDate.isDigit($0) || $0 == 0x2E }
    }

    static func read(_ object: [String: JSONValue], context: FeedContext) -> FeedDocument {
        var document = FeedDocument(
            format: .jsonFeed, title: context.text(object["title"]?.text), items: [],
            movedTo: context.movedTo(object["feed_url"]?.stringValue))
        document.image = context.assetURL(object["icon"]?.stringValue)
        guard case .array(let items)? = object["items"] else { return document }
        for case .object(let item) in items.prefix(context.limits.maxItems) {
            var assets: [FeedAsset] = []
            if case .array(let attachments)? = item["attachments"] {
                for case .object(let attachment) in attachments where assets.count < context.limits.maxAssetsPerItem {
                    // The same URL twice is one asset (as in RSS and Atom).
                    guard let url = context.assetURL(attachment["url"]?.stringValue),
                        !assets.contains(where: { $0.url == url })
                    else { continue }
                    assets.append(
                        FeedAsset(
                            url: url, sha256: nil, unpack: nil, length: attachment["size_in_bytes"]?.length,
                            mimeType: context.text(attachment["mime_type"]?.stringValue)))
                }
            }
            let date =
                item["date_published"]?.stringValue.flatMap(FeedDate.rfc822)
                ?? item["date_modified"]?.stringValue.flatMap(FeedDate.rfc822)
            var feedItem = FeedItem(
                id: context.text(item["id"]?.text), title: context.text(item["title"]?.stringValue),
                date: date, assets: assets)
            feedItem.image = context.assetURL(item["image"]?.stringValue) ?? context.assetURL(item["banner_image"]?.stringValue)
            feedItem.link = context.assetURL(item["url"]?.stringValue)?.absoluteString
            feedItem.summary = context.text(item["summary"]?.stringValue)
            document.items.append(feedItem)
        }
        return document
    }
}

extension JSONValue {
    /// The value when it is a string.
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A scalar as text: a string as it is, a number in decimal (an integral double without its `.0`),
    /// `true`/`false`; nil for null, arrays and objects.
    var text: String? {
        switch self {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .double(let number):
            if number.rounded() == number, abs(number) < 9e15 { return String(Int64(number)) }
            return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .null, .array, .object: return nil
        }
    }

    /// A byte count: a non-negative integer (or integral double); nil otherwise.
    var length: Int64? {
        switch self {
        case .integer(let number): return number >= 0 ? number : nil
        case .double(let number):
            return number >= 0 && number < 9e18 && number.rounded() == number ? Int64(number) : nil
        default: return nil
        }
    }
}
