import Foundation
import NewsstandCore

/// The issues catalog into a ``FeedDocument``: a publisher's `{"publication", "issues": [...]}`, or the
/// array of issues `issues export` writes (its `status`, `state` and byte counts are ignored). Per issue:
/// `id` (optional), `name` as the title, `date` (`YYYY-MM-DD`, read as that day's midnight UTC), and
/// `assets` with `url` (resolved against the feed URL), `sha256` and `unpack`. An asset whose `sha256`
/// is not 64 hex digits is dropped: the publisher meant to pin its bytes, and we cannot.
enum CatalogFeedReader {
    /// The document when `value` is a catalog; nil when it is some other JSON.
    static func read(_ value: JSONValue, context: FeedContext) -> FeedDocument? {
        let title: String?
        let issues: [JSONValue]
        switch value {
        case .object(let object):
            guard case .array(let list)? = object["issues"] else { return nil }
            issues = list
            switch object["publication"] {
            case .object(let publication)?:
                title = context.text(publication["name"]?.stringValue ?? publication["title"]?.stringValue)
            case let other?: title = context.text(other.stringValue)
            case nil: title = nil
            }
        case .array(let list):
            // An export: every element an issue with a name (an empty array is no evidence of anything).
            guard !list.isEmpty, list.allSatisfy(isExportedIssue) else { return nil }
            issues = list
            title = nil
        default:
            return nil
        }
        var document = FeedDocument(format: .catalog, title: title, items: [], movedTo: nil)
        for case .object(let issue) in issues.prefix(context.limits.maxItems) {
            var assets: [FeedAsset] = []
            if case .array(let list)? = issue["assets"] {
                for case .object(let asset) in list where assets.count < context.limits.maxAssetsPerItem {
                    guard let url = context.assetURL(asset["url"]?.stringValue) else { continue }
                    var sha256: String?
                    if case .string(let text)? = asset["sha256"] {
                        guard let valid = FeedContext.sha256(text) else { continue }
                        sha256 = valid
                    }
                    var unpack: Bool?
                    if case .bool(let flag)? = asset["unpack"] { unpack = flag }
                    assets.append(FeedAsset(url: url, sha256: sha256, unpack: unpack, length: nil, mimeType: nil))
                }
            }
            document.items.append(
                FeedItem(
                    id: context.text(issue["id"]?.text), title: context.text(issue["name"]?.stringValue),
                    date: issue["date"]?.stringValue.flatMap(FeedDate.rfc3339), assets: assets))
        }
        return document
    }

    private static func isExportedIssue(_ value: JSONValue) -> Bool {
        guard case .object(let object) = value, case .string? = object["name"] else { return false }
        return true
    }
}
