import Foundation

/// RSS 2.0 (and its relatives 0.9x and 1.0/RDF, which share the item shape) into a ``FeedDocument``:
/// `channel/title`, `itunes:new-feed-url`; per item `guid` (else RDF's `rdf:about`), `title` (else
/// `itunes:title`), `pubDate` (else `dc:date`, else `dcterms:issued`, `dcterms:created`, `dcterms:modified`),
/// every `enclosure`, and when there is none, every Media RSS `media:content` (also inside `media:group`).
/// Elements it does not read are stepped over without decoding their text.
enum RSSReader {
    static let itunesNamespaces: Set<String> = [
        "http://www.itunes.com/dtds/podcast-1.0.dtd", "https://www.itunes.com/dtds/podcast-1.0.dtd",
    ]
    static let dublinCore = "http://purl.org/dc/elements/1.1/"
    static let dublinCoreTerms = "http://purl.org/dc/terms/"
    /// Media RSS; some feeds leave out the final slash.
    static let mediaRSS: Set<String> = ["http://search.yahoo.com/mrss/", "http://search.yahoo.com/mrss"]
    static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    /// The namespaces RSS's own elements are found in: none (RSS 0.9x, 2.0), RSS 1.0's, and the one some
    /// RSS 2.0 feeds declare.
    static let rssNamespaces: Set<String> = ["http://purl.org/rss/1.0/", "http://backend.userland.com/rss2"]

    private enum Field {
        case feedTitle, newFeedURL, title, itunesTitle, guid, pubDate, dcDate
        /// `dcterms:issued`, `created`, `modified`, in that order of preference.
        case termsDate(Int)
    }

    private enum Node {
        case channel, item, mediaGroup, other
    }

    private static let termsDates = ["issued": 0, "created": 1, "modified": 2]

    static func read(_ xml: inout XMLTokenizer, root: XMLTokenizer.StartTag, context: FeedContext) throws
        -> FeedDocument
    {
        var document = FeedDocument(format: .rss, title: nil, items: [], movedTo: nil)
        var stack: [Node] = [.channel]  // the root: RDF's items are its children; RSS's channel is too
        var item = ItemFields()
        var capture: (field: Field, depth: Int)?
        var buffer = ""

        while let event = try xml.next() {
            switch event {
            case .start(let tag):
                let parent = stack.last ?? .other
                if capture != nil {
                    stack.append(.other)  // markup inside a captured field: keep its text
                    continue
                }
                let plain = tag.namespace.map { rssNamespaces.contains($0) } ?? true
                let itunes = isITunes(tag)
                switch parent {
                case .channel:
                    if plain && tag.localName == "channel" {
                        stack.append(.channel)
                        continue
                    }
                    if plain && tag.localName == "item" {
                        guard document.items.count < context.limits.maxItems else { return document }
                        item = ItemFields()
                        item.about = tag.attribute("about", namespace: rdf)
                        stack.append(.item)
                        continue
                    }
                    if (plain && tag.localName == "title") || (itunes && tag.localName == "new-feed-url") {
                        capture = (tag.localName == "title" ? .feedTitle : .newFeedURL, xml.depth)
                    }
                case .item, .mediaGroup:
                    let media = tag.namespace.map { mediaRSS.contains($0) } ?? false
                    if media && tag.localName == "content" {
                        item.mediaContents.append(
                            (tag.attribute("url"), tag.attribute("fileSize"), tag.attribute("type")))
                    } else if media && tag.localName == "group", case .item = parent {
                        stack.append(.mediaGroup)
                        continue
                    } else if case .mediaGroup = parent {
                        break
                    } else if plain && tag.localName == "enclosure" {
                        item.enclosures.append(
                            (tag.attribute("url"), tag.attribute("length"), tag.attribute("type")))
                    } else if plain, let field = itemFields[tag.localName] {
                        capture = (field, xml.depth)
                    } else if itunes && tag.localName == "title" {
                        capture = (.itunesTitle, xml.depth)
                    } else if tag.namespace == dublinCore && tag.localName == "date" {
                        capture = (.dcDate, xml.depth)
                    } else if tag.namespace == dublinCoreTerms, let rank = termsDates[tag.localName] {
                        capture = (.termsDate(rank), xml.depth)
                    }
                case .other:
                    break
                }
                if capture != nil {
                    buffer = ""
                    stack.append(.other)
                } else {
                    try xml.skipElement()
                }
            case .text(let text):
                if capture != nil { buffer += xml.string(text) }
            case .end:
                guard let node = stack.popLast() else { return document }
                if let open = capture, xml.depth < open.depth {
                    capture = nil
                    assign(open.field, buffer, to: &document, item: &item, context: context)
                }
                if case .item = node { document.items.append(item.make(context)) }
                if stack.isEmpty { return document }
            }
        }
        return document
    }

    private static let itemFields: [String: Field] = ["title": .title, "guid": .guid, "pubDate": .pubDate]

    private static func isITunes(_ tag: XMLTokenizer.StartTag) -> Bool {
        if let namespace = tag.namespace { return itunesNamespaces.contains(namespace) }
        return tag.prefix == "itunes"  // used without being declared, as some podcast feeds do
    }

    private static func assign(
        _ field: Field, _ text: String, to document: inout FeedDocument, item: inout ItemFields, context: FeedContext
    ) {
        switch field {
        case .feedTitle: document.title = document.title ?? context.text(text)
        case .newFeedURL: document.movedTo = document.movedTo ?? context.movedTo(text)
        case .title: item.title = item.title ?? context.text(text)
        case .itunesTitle: item.itunesTitle = item.itunesTitle ?? context.text(text)
        case .guid: item.guid = item.guid ?? context.text(text)
        case .pubDate: item.pubDate = item.pubDate ?? FeedDate.rfc822(text)
        // W3DTF by the spec, but feeds write RFC 822 here too; `rfc822` reads both.
        case .dcDate: item.dcDate = item.dcDate ?? FeedDate.rfc822(text)
        case .termsDate(let rank):
            if item.termsDates[rank] == nil { item.termsDates[rank] = FeedDate.rfc822(text) }
        }
    }

    private struct ItemFields {
        var guid: String?
        var about: String?
        var title: String?
        var itunesTitle: String?
        var pubDate: Date?
        var dcDate: Date?
        var termsDates: [Date?] = [nil, nil, nil]
        var enclosures: [(url: String?, length: String?, type: String?)] = []
        var mediaContents: [(url: String?, length: String?, type: String?)] = []

        func make(_ context: FeedContext) -> FeedItem {
            var assets: [FeedAsset] = []
            // Media RSS only when there is no enclosure: beside one, `media:content` is mostly a picture or
            // another rendition of the same media.
            let files = enclosures.isEmpty ? mediaContents : enclosures
            for file in files where assets.count < context.limits.maxAssetsPerItem {
                if let asset = context.enclosure(url: file.url, length: file.length, type: file.type),
                    !assets.contains(where: { $0.url == asset.url })
                {
                    assets.append(asset)
                }
            }
            let date = pubDate ?? dcDate ?? termsDates.lazy.compactMap { $0 }.first
            return FeedItem(id: guid ?? context.text(about), title: title ?? itunesTitle, date: date, assets: assets)
        }
    }
}
