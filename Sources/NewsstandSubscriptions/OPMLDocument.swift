import Foundation
import NewsstandCore
import NewsstandFeeds

/// OPML, the file feed readers exchange subscriptions in: `<outline type="rss" text="…" xmlUrl="…"/>`.
public enum OPMLDocument: Sendable {
    /// An OPML 2.0 document with one outline per subscription (its name, feed URL and format).
    public static func export(_ subscriptions: [Subscription], title: String = "issues subscriptions") -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<opml version="2.0">"#,
            "  <head><title>\(escape(title))</title></head>",
            "  <body>",
        ]
        for subscription in subscriptions {
            // Always "rss", whatever the format: it is what OPML 2.0 names for any feed, and what other
            // readers import (gPodder drops an outline of type "atom").
            lines.append(
                #"    <outline type="rss" text="\#(escape(subscription.name))" title="\#(escape(subscription.name))" xmlUrl="\#(escape(subscription.url.absoluteString))"/>"#
            )
        }
        lines += ["  </body>", "</opml>", ""]
        return lines.joined(separator: "\n")
    }

    /// Escapes text for an XML attribute or element.
    static func escape(_ text: String) -> String { MarkupText.escaped(text) }

    /// One feed outline of an OPML file.
    package struct Outline: Sendable, Equatable {
        package var title: String?
        package var xmlURL: String?
    }
}

/// The result of subscribing to one outline of an OPML file.
public struct OPMLEntry: Sendable {
    /// The outline's title or text.
    public var title: String?
    /// The outline's feed URL, when it has one that parses.
    public var url: URL?
    /// The new subscription's report, or why this entry was refused.
    public var result: Result<SyncReport, NewsstandError>
    /// The name of the subscription that already reads this feed, when it was there before the import
    /// (nothing was changed then, and `result` is an unchanged report).
    public var alreadySubscribed: String?

    package init(title: String? = nil, url: URL? = nil, result: Result<NewsstandSubscriptions.SyncReport, NewsstandCore.NewsstandError>) {
        self.title = title
        self.url = url
        self.result = result
    }
}

extension OPMLDocument {
    /// Every `<outline>` with an `xmlUrl` (any depth: categories nest them), plus outlines of type
    /// rss/atom without one (reported as bad entries, not dropped in silence).
    /// - Throws: `.invalidFeed` when the data is not well-formed XML with an `opml` root, or declares entities.
    package static func outlines(_ data: Data) throws -> [Outline] {
        try data.withUnsafeBytes { raw in
            var xml = XMLTokenizer(bytes: raw.bindMemory(to: UInt8.self))
            var outlines: [Outline] = []
            do {
                guard case .start(let root)? = try xml.next(), root.localName.lowercased() == "opml" else {
                    throw NewsstandError(.invalidFeed, "not an OPML file (its root element is not <opml>)")
                }
                while let event = try xml.next() {
                    guard case .start(let tag) = event, tag.localName == "outline" else { continue }
                    let url = tag.attribute("xmlUrl") ?? tag.attribute("xmlURL") ?? tag.attribute("xmlurl")
                    let type = tag.attribute("type")?.lowercased()
                    guard url != nil || type == "rss" || type == "atom" else { continue }
                    let title = tag.attribute("title") ?? tag.attribute("text")
                    outlines.append(Outline(title: title.map(IssueName.fromTitle), xmlURL: url))
                }
            } catch let error as XMLTokenizer.SyntaxError {
                throw NewsstandError(.invalidFeed, "not a readable OPML file: \(error)")
            }
            return outlines
        }
    }
}
