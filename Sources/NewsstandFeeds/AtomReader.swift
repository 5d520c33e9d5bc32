import Foundation

/// Atom 1.0 (RFC 4287) into a ``FeedDocument``: `feed/title`; per entry `id`, `title`, `published` (else
/// Atom 0.3's `issued` or `created`, `dcterms:issued` or `created`, else `updated`, Atom 0.3's `modified`,
/// `dcterms:modified`), every `link rel="enclosure"`, resolved against `xml:base` where the feed sets one. A
/// `type="html"` title is unescaped HTML: its tags are dropped; an `xhtml` one gives its text.
enum AtomReader {
    static let namespace = "http://www.w3.org/2005/Atom"

    private enum Field {
        case feedTitle, id, title, published, updated, summary, logo, icon
        /// The fallbacks of `published` (rank 0, 1) and of `updated` (rank 2).
        case otherDate(Int)
    }

    private static let otherDates = ["issued": 0, "created": 1, "modified": 2]
    static let dublinCoreTerms = "http://purl.org/dc/terms/"

    private struct Node {
        var isEntry: Bool
        var base: URL?
    }

    // Over 80 lines on purpose: one pass over the tokens whose state (the open element, the entry being built,
    // xml:base) every case reads and changes; split, each helper would take all of it inout.
    static func read(_ xml: inout XMLTokenizer, root: XMLTokenizer.StartTag, context: FeedContext) throws
        -> FeedDocument
    {
        // Atom's elements are in the root's namespace (Atom 1.0's, or an older draft's).
        let atom = root.namespace
        var document = FeedDocument(format: .atom, title: nil, items: [], movedTo: nil)
        var stack = [Node(isEntry: false, base: base(of: root, in: context.url))]
        var entry = EntryFields()
        var capture: (field: Field, depth: Int, isHTML: Bool)?
        var buffer = ""

        while let event = try xml.next() {
            switch event {
            case .start(let tag):
                let parent = stack.last ?? Node(isEntry: false, base: nil)
                if capture != nil {
                    stack.append(parent)
                    continue
                }
                let ours = tag.namespace == atom
                let node = Node(isEntry: false, base: base(of: tag, in: parent.base))
                if ours && tag.localName == "entry" && stack.count == 1 {
                    guard document.items.count < context.limits.maxItems else { return document }
                    entry = EntryFields()
                    stack.append(Node(isEntry: true, base: node.base))
                    continue
                }
                if ours && parent.isEntry && tag.localName == "link" {
                    let rel = tag.attribute("rel")?.trimmingCharacters(in: .whitespaces).lowercased() ?? "alternate"
                    if rel == "enclosure" {
                        entry.enclosures.append(
                            (tag.attribute("href"), node.base, tag.attribute("length"), tag.attribute("type")))
                        if RSSReader.bareType(tag.attribute("type")).hasPrefix("image/") {
                            entry.image = entry.image ?? context.enclosure(url: tag.attribute("href"), base: node.base, length: nil, type: nil)?.url
                        }
                    } else if rel == "alternate", entry.link == nil {
                        entry.link = context.enclosure(url: tag.attribute("href"), base: node.base, length: nil, type: nil)?.url.absoluteString
                    }
                } else if ours && (parent.isEntry || stack.count == 1) {
                    let isHTML = tag.attribute("type")?.lowercased() == "html"
                    switch (tag.localName, parent.isEntry) {
                    case ("title", false): capture = (.feedTitle, xml.depth, isHTML)
                    case ("title", true): capture = (.title, xml.depth, isHTML)
                    case ("summary", true): capture = (.summary, xml.depth, isHTML)
                    case ("logo", false): capture = (.logo, xml.depth, false)
                    case ("icon", false): capture = (.icon, xml.depth, false)
                    case ("id", true): capture = (.id, xml.depth, false)
                    case ("published", true): capture = (.published, xml.depth, false)
                    case ("updated", true): capture = (.updated, xml.depth, false)
                    case (let name, true) where otherDates[name] != nil:
                        capture = (.otherDate(otherDates[name] ?? 2), xml.depth, false)
                    default: break
                    }
                } else if parent.isEntry, tag.namespace == dublinCoreTerms, let rank = otherDates[tag.localName] {
                    capture = (.otherDate(rank), xml.depth, false)
                }
                if capture != nil {
                    buffer = ""
                    stack.append(node)
                } else {
                    try xml.skipElement()
                }
            case .text(let text):
                if capture != nil { buffer += xml.string(text) }
            case .end:
                guard let node = stack.popLast() else { return document }
                if let open = capture, xml.depth < open.depth {
                    capture = nil
                    let text = open.isHTML ? HTMLText.plain(buffer) : buffer
                    switch open.field {
                    case .feedTitle: document.title = document.title ?? context.text(text)
                    case .title: entry.title = entry.title ?? context.text(text)
                    case .id: entry.id = entry.id ?? context.text(text)
                    case .summary: entry.summary = entry.summary ?? context.text(text)
                    // The logo (a wide picture) before the icon (a small square), whichever comes first.
                    case .logo: document.image = context.enclosure(url: text, base: node.base, length: nil, type: nil)?.url ?? document.image
                    case .icon:
                        if document.image == nil { document.image = context.enclosure(url: text, base: node.base, length: nil, type: nil)?.url }
                    // RFC 3339 by the spec; `rfc822` reads it, W3DTF's shorter forms, and the RFC 822 dates
                    // some generators write here.
                    case .published: entry.published = entry.published ?? FeedDate.rfc822(text)
                    case .updated: entry.updated = entry.updated ?? FeedDate.rfc822(text)
                    case .otherDate(let rank):
                        if entry.otherDates[rank] == nil { entry.otherDates[rank] = FeedDate.rfc822(text) }
                    }
                }
                if node.isEntry { document.items.append(entry.make(context)) }
                if stack.isEmpty { return document }
            }
        }
        return document
    }

    /// The base URL in effect inside `tag`: its `xml:base` resolved against the outer one.
    private static func base(of tag: XMLTokenizer.StartTag, in outer: URL?) -> URL? {
        guard let text = tag.attribute("base", namespace: XMLTokenizer.xmlNamespace) else { return outer }
        let encoded = FeedContext.percentEncodeIllegal(text.trimmingCharacters(in: .whitespacesAndNewlines))
        return URL(string: encoded, relativeTo: outer)?.absoluteURL ?? outer
    }

    private struct EntryFields {
        var id: String?
        var title: String?
        var published: Date?
        var updated: Date?
        var otherDates: [Date?] = [nil, nil, nil]
        var enclosures: [(href: String?, base: URL?, length: String?, type: String?)] = []
        var link: String?
        var summary: String?
        var image: URL?

        func make(_ context: FeedContext) -> FeedItem {
            var assets: [FeedAsset] = []
            for link in enclosures where assets.count < context.limits.maxAssetsPerItem {
                // The same URL twice is one asset (as in RSS): the same media is never fetched twice.
                if let asset = context.enclosure(url: link.href, base: link.base, length: link.length, type: link.type),
                    !assets.contains(where: { $0.url == asset.url })
                {
                    assets.append(asset)
                }
            }
            let date = published ?? otherDates[0] ?? otherDates[1] ?? updated ?? otherDates[2]
            var item = FeedItem(id: id, title: title, date: date, assets: assets)
            item.link = link
            item.summary = summary
            item.image = image
            return item
        }
    }
}
