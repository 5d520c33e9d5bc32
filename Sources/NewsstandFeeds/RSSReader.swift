import Foundation

/// RSS 2.0 (and its relatives 0.9x and 1.0/RDF, which share the item shape) into a ``FeedDocument``:
/// `channel/title`, `itunes:new-feed-url`; per item `guid` (else RDF's `rdf:about`), `title` (else
/// `itunes:title`), `pubDate` (else `dc:date`, else `dcterms:issued`, `dcterms:created`, `dcterms:modified`),
/// every `enclosure`, and when there is none, every Media RSS `media:content` (also inside `media:group`).
/// Podcasting 2.0: the channel's `podcast:guid`, and per item the preferred `podcast:transcript` and the
/// `podcast:chapters` as ``FeedItem/extras``.
/// Elements it does not read are stepped over without decoding their text.
enum RSSReader {
    static let itunesNamespaces: Set<String> = [
        "http://www.itunes.com/dtds/podcast-1.0.dtd", "https://www.itunes.com/dtds/podcast-1.0.dtd",
    ]
    static let dublinCore = "http://purl.org/dc/elements/1.1/"
    static let dublinCoreTerms = "http://purl.org/dc/terms/"
    /// Media RSS; some feeds leave out the final slash.
    static let mediaRSS: Set<String> = ["http://search.yahoo.com/mrss/", "http://search.yahoo.com/mrss"]
    /// Podcasting 2.0; early feeds declared the namespace by its documentation URL.
    static let podcastNamespaces: Set<String> = [
        "https://podcastindex.org/namespace/1.0",
        "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    ]
    static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    /// The namespaces RSS's own elements are found in: none (RSS 0.9x, 2.0), RSS 1.0's, and the one some
    /// RSS 2.0 feeds declare.
    static let rssNamespaces: Set<String> = ["http://purl.org/rss/1.0/", "http://backend.userland.com/rss2"]

    private enum Field {
        case feedTitle, newFeedURL, podcastGUID, ttl, title, itunesTitle, guid, pubDate, dcDate, link, description
        case channelImage
        /// `dcterms:issued`, `created`, `modified`, in that order of preference.
        case termsDate(Int)
    }

    private enum Node {
        case channel, item, mediaGroup, alternateEnclosure, channelImage, other
    }

    private static let termsDates = ["issued": 0, "created": 1, "modified": 2]

    // Over 80 lines on purpose: one pass over the tokens whose state (the open element, the item being built,
    // xml:base) every case reads and changes; split, each helper would take all of it inout.
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
                let podcast = isPodcast(tag)
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
                    if plain && tag.localName == "image" {
                        stack.append(.channelImage)
                        continue
                    }
                    if itunes && tag.localName == "image" {
                        // The channel's own image wins over the RSS `image` when both are given (podcast apps do so).
                        document.image = context.enclosure(url: tag.attribute("href"), length: nil, type: nil)?.url ?? document.image
                    }
                    if (plain && tag.localName == "title") || (itunes && tag.localName == "new-feed-url") {
                        capture = (tag.localName == "title" ? .feedTitle : .newFeedURL, xml.depth)
                    } else if podcast && tag.localName == "guid" {
                        capture = (.podcastGUID, xml.depth)
                    } else if plain && tag.localName == "ttl" {
                        capture = (.ttl, xml.depth)
                    }
                case .item, .mediaGroup:
                    let media = tag.namespace.map { mediaRSS.contains($0) } ?? false
                    if media && tag.localName == "content" {
                        item.mediaContents.append(
                            (tag.attribute("url"), tag.attribute("fileSize"), tag.attribute("type")))
                        if tag.attribute("medium") == "image" || bareType(tag.attribute("type")).hasPrefix("image/") {
                            item.images.append(tag.attribute("url"))
                        }
                    } else if media && tag.localName == "thumbnail" {
                        item.thumbnails.append(tag.attribute("url"))
                    } else if media && tag.localName == "group", case .item = parent {
                        stack.append(.mediaGroup)
                        continue
                    } else if case .mediaGroup = parent {
                        break
                    } else if podcast && tag.localName == "alternateEnclosure" {
                        item.alternates.append((tag.attribute("length"), tag.attribute("type"), []))
                        stack.append(.alternateEnclosure)
                        continue
                    } else if podcast && tag.localName == "transcript" {
                        item.transcripts.append((tag.attribute("url"), tag.attribute("type")))
                    } else if podcast && tag.localName == "chapters" {
                        item.chapters.append((tag.attribute("url"), tag.attribute("type")))
                    } else if plain && tag.localName == "enclosure" {
                        item.enclosures.append(
                            (tag.attribute("url"), tag.attribute("length"), tag.attribute("type")))
                    } else if plain, let field = itemFields[tag.localName] {
                        capture = (field, xml.depth)
                    } else if itunes && tag.localName == "title" {
                        capture = (.itunesTitle, xml.depth)
                    } else if itunes && tag.localName == "image" {
                        item.itunesImage = item.itunesImage ?? tag.attribute("href")
                    } else if tag.namespace == dublinCore && tag.localName == "date" {
                        capture = (.dcDate, xml.depth)
                    } else if tag.namespace == dublinCoreTerms, let rank = termsDates[tag.localName] {
                        capture = (.termsDate(rank), xml.depth)
                    }
                case .alternateEnclosure:
                    if isPodcast(tag) && tag.localName == "source", !item.alternates.isEmpty,
                        item.alternates[item.alternates.count - 1].sources.count < context.limits.maxAssetsPerItem
                    {
                        item.alternates[item.alternates.count - 1].sources.append(tag.attribute("uri"))
                    }
                case .channelImage:
                    if plain && tag.localName == "url" { capture = (.channelImage, xml.depth) }
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

    private static let itemFields: [String: Field] = [
        "title": .title, "guid": .guid, "pubDate": .pubDate, "link": .link, "description": .description,
    ]

    private static func isITunes(_ tag: XMLTokenizer.StartTag) -> Bool {
        if let namespace = tag.namespace { return itunesNamespaces.contains(namespace) }
        return tag.prefix == "itunes"  // used without being declared, as some podcast feeds do
    }

    private static func isPodcast(_ tag: XMLTokenizer.StartTag) -> Bool {
        if let namespace = tag.namespace { return podcastNamespaces.contains(namespace) }
        return tag.prefix == "podcast"  // undeclared, as with `itunes:`
    }

    /// A MIME type without parameters, lowercased: what the preferences compare.
    static func bareType(_ type: String?) -> String {
        let bare = type?.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return bare.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// The rank of a transcript's type, lower preferred: JSON keeps timing and speakers, SRT and VTT
    /// keep timing, HTML and text only the words; an unknown type comes last but is still kept.
    static func transcriptRank(_ type: String?) -> Int {
        switch bareType(type) {
        case "application/json": return 0
        case "application/x-subrip", "application/srt", "text/srt": return 1
        case "text/vtt": return 2
        case "text/html", "text/plain": return 3
        default: return 4
        }
    }

    private static func assign(
        _ field: Field, _ text: String, to document: inout FeedDocument, item: inout ItemFields, context: FeedContext
    ) {
        switch field {
        case .feedTitle: document.title = document.title ?? context.text(text)
        case .newFeedURL: document.movedTo = document.movedTo ?? context.movedTo(text)
        case .podcastGUID:
            if document.podcastGUID == nil, let guid = context.text(text), !guid.isEmpty { document.podcastGUID = guid }
        case .ttl:
            // Minutes (RSS 2.0); a week at most, so that a typo cannot stop a feed being checked.
            if document.ttlMinutes == nil, let minutes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                minutes > 0
            {
                document.ttlMinutes = min(minutes, 7 * 24 * 60)
            }
        case .channelImage:
            if document.image == nil { document.image = context.enclosure(url: text, length: nil, type: nil)?.url }
        case .link: item.link = item.link ?? context.enclosure(url: text, length: nil, type: nil)?.url.absoluteString
        case .description: item.summary = item.summary ?? context.text(HTMLText.plain(text))
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
        var transcripts: [(url: String?, type: String?)] = []
        var chapters: [(url: String?, type: String?)] = []
        /// `podcast:alternateEnclosure`s: length and type, and the URIs of its sources (mirrors of one file).
        var alternates: [(length: String?, type: String?, sources: [String?])] = []
        var link: String?
        var summary: String?
        var itunesImage: String?
        var thumbnails: [String?] = []
        var images: [String?] = []

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
            var item = FeedItem(id: guid ?? context.text(about), title: title ?? itunesTitle, date: date, assets: assets)
            item.extras = extras(context, besides: assets)
            item.variants = variants(context)
            item.link = link
            item.summary = summary
            // The podcast's own episode art first, then Media RSS's thumbnail, then an image among its contents.
            item.image = ([itunesImage] + thumbnails + images).lazy.compactMap {
                context.enclosure(url: $0, length: nil, type: nil)?.url
            }.first
            return item
        }

        /// Every enclosure, then each alternate enclosure's first source that is a usable URL (the others are
        /// mirrors of the same file): a URL listed twice (an alternate repeating the enclosure) is one variant,
        /// so the same media is never fetched twice.
        func variants(_ context: FeedContext) -> [FeedAsset] {
            var variants: [FeedAsset] = []
            func add(_ asset: FeedAsset?) {
                guard let asset, variants.count < context.limits.maxAssetsPerItem,
                    !variants.contains(where: { $0.url == asset.url })
                else { return }
                variants.append(asset)
            }
            for file in enclosures { add(context.enclosure(url: file.url, length: file.length, type: file.type)) }
            for alternate in alternates {
                add(
                    alternate.sources.lazy.compactMap {
                        context.enclosure(url: $0, length: alternate.length, type: alternate.type)
                    }.first)
            }
            return variants.count > 1 ? variants : []
        }

        /// The one transcript to keep (the best-ranked type, the first of equals) and the chapters, as assets
        /// never unpacked (a JSON or text file is no archive); a URL already among the item's files is left out.
        func extras(_ context: FeedContext, besides assets: [FeedAsset]) -> [FeedAsset] {
            func asset(_ file: (url: String?, type: String?)) -> FeedAsset? {
                guard var asset = context.enclosure(url: file.url, length: nil, type: file.type),
                    !assets.contains(where: { $0.url == asset.url })
                else { return nil }
                asset.unpack = false
                return asset
            }
            var extras: [FeedAsset] = []
            let ranked = transcripts.enumerated().sorted {
                (RSSReader.transcriptRank($0.element.type), $0.offset) < (RSSReader.transcriptRank($1.element.type), $1.offset)
            }
            if let transcript = ranked.lazy.compactMap({ asset($0.element) }).first { extras.append(transcript) }
            // The namespace gives chapters one type; a missing type is taken as that type too.
            let chapterFiles = chapters.filter {
                let type = RSSReader.bareType($0.type)
                return type.isEmpty || type == "application/json+chapters"
            }
            if let chapter = chapterFiles.lazy.compactMap({ asset($0) }).first,
                !extras.contains(where: { $0.url == chapter.url })
            {
                extras.append(chapter)
            }
            return extras
        }
    }
}
