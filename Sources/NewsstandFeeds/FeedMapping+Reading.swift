import Foundation
import NewsstandCore

extension FeedMapping {
    /// The document a mapping reads out of `value`.
    /// - Throws: `.invalidFeed` when the mapping's `items` path does not lead to an array.
    func read(_ value: JSONValue, context: FeedContext) throws -> FeedDocument {
        guard case .array(let list)? = items.value(in: value) else {
            let path = items.segments.isEmpty ? "the document itself" : items.segments.joined(separator: ".")
            throw NewsstandError(
                .invalidFeed, "\(context.url.absoluteString) does not fit the mapping (\(path) is not an array)")
        }
        var document = FeedDocument(
            format: .mapped, title: context.text(title?.render(value)), items: [], movedTo: nil)
        for item in list.prefix(context.limits.maxItems) {
            let date = self.date?.render(item).flatMap(dateFormat.date)
            var assets: [FeedAsset] = []
            for template in self.assets where assets.count < context.limits.maxAssetsPerItem {
                guard let url = context.assetURL(template.url.render(item, date: date)) else { continue }
                var sha256: String?
                if let shaTemplate = template.sha256, let text = shaTemplate.render(item, date: date) {
                    // A checksum the publisher gives but that is not one: the bytes cannot be pinned.
                    guard let valid = FeedContext.sha256(text) else { continue }
                    sha256 = valid
                }
                assets.append(FeedAsset(url: url, sha256: sha256, unpack: template.unpack, length: nil, mimeType: nil))
            }
            var feedItem = FeedItem(
                id: context.text(id?.render(item, date: date)), title: context.text(name.render(item, date: date)),
                date: date, assets: assets)
            feedItem.image = image.flatMap { context.assetURL($0.render(item, date: date)) }
            document.items.append(feedItem)
        }
        return document
    }
}
