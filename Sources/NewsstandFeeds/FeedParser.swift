import Foundation
import NewsstandCore

/// A fetched body into a ``FeedParseResult``: the one entry point of feed parsing. Pure: no I/O, no
/// state; the format is detected from the content (never the URL or a Content-Type).
///
/// - XML whose root is `rss` or `rdf:RDF`: ``RSSReader``; `feed`: ``AtomReader``; an HTML page (or XHTML):
///   its feed links (``HTMLPage``).
/// - JSON: with a mapping, read through it; else a JSON Feed (``JSONFeedReader``) or the issues catalog
///   (``CatalogFeedReader``).
package enum FeedParser {
    /// Parses one fetched body.
    /// - Parameters:
    ///   - body: The response body, whole.
    ///   - url: Where it was fetched (after redirects): the base of relative URLs, and named in errors.
    ///   - mapping: How to read a publisher's own JSON; when given, the body must be JSON.
    ///   - limits: The safety caps.
    /// - Returns: The feed, or an HTML page's feed links (possibly none).
    /// - Throws: `NewsstandError` `.unsafeFeed` for a body over `limits.maxBodyBytes` or XML that declares
    ///   entities; `.invalidFeed` for anything that is not a feed, with the reason (malformed or truncated
    ///   XML or JSON, an unknown root element, JSON neither a JSON Feed nor a catalog, a mapping that does
    ///   not fit, an encoding iconv does not know, named). Never traps, whatever the bytes.
    /// - Blocks the calling thread for the parse (about 4 ms a megabyte of RSS in a release build); call it
    ///   off the cooperative pool for large bodies. Needs no isolation.
    package static func parse(_ body: Data, url: URL, mapping: FeedMapping?, limits: FeedLimits = FeedLimits()) throws
        -> FeedParseResult
    {
        guard body.count <= limits.maxBodyBytes else {
            throw NewsstandError(
                .unsafeFeed,
                "\(url.absoluteString) is \(body.count) bytes, over the feed size cap of \(limits.maxBodyBytes) bytes; "
                    + "refused"
            )
        }
        var limits = limits
        limits.maxItems = max(0, limits.maxItems)
        let context = FeedContext(url: url, limits: limits)
        return try body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let utf8: [UInt8]?
            do {
                utf8 = try FeedEncoding.utf8(bytes)
            } catch let error as FeedEncoding.Unsupported {
                throw NewsstandError(
                    .invalidFeed,
                    "\(url.absoluteString) declares the encoding \(error.name.debugDescription), which iconv on this "
                        + "system cannot read; refused")
            }
            if let converted = utf8 {
                return try converted.withUnsafeBufferPointer { try parse($0, mapping: mapping, context: context) }
            }
            return try parse(bytes, mapping: mapping, context: context)
        }
    }

    private static func parse(_ all: UnsafeBufferPointer<UInt8>, mapping: FeedMapping?, context: FeedContext) throws
        -> FeedParseResult
    {
        // The channel's image stands in for the items without one of their own.
        let result = try read(all, mapping: mapping, context: context)
        guard case .feed(var document) = result, let image = document.image else { return result }
        for index in document.items.indices where document.items[index].image == nil {
            document.items[index].image = image
        }
        return .feed(document)
    }

    private static func read(_ all: UnsafeBufferPointer<UInt8>, mapping: FeedMapping?, context: FeedContext) throws
        -> FeedParseResult
    {
        var start = 0
        if all.count >= 3, all[0] == 0xEF, all[1] == 0xBB, all[2] == 0xBF { start = 3 }  // a UTF-8 byte-order mark
        let bytes = UnsafeBufferPointer(rebasing: all[start...])
        guard let first = bytes.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) else {
            throw notAFeed(context, "the body is empty")
        }
        if let mapping {
            return .feed(try mapping.read(json(bytes, context), context: context))
        }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let value = try json(bytes, context)
            if case .object(let object) = value, JSONFeedReader.isJSONFeed(object) {
                return .feed(JSONFeedReader.read(object, context: context))
            }
            if let document = CatalogFeedReader.read(value, context: context) { return .feed(document) }
            throw notAFeed(context, "JSON, but neither a JSON Feed nor an issues catalog; a mapping can read it")
        case UInt8(ascii: "<"):
            if HTMLPage.looksLikeHTML(bytes) { return .html(alternates: HTMLPage.alternates(bytes, context: context)) }
            return try xml(bytes, context)
        default:
            throw notAFeed(context, "neither XML, HTML nor JSON")
        }
    }

    private static func xml(_ bytes: UnsafeBufferPointer<UInt8>, _ context: FeedContext) throws -> FeedParseResult {
        var tokenizer = XMLTokenizer(bytes: bytes)
        do {
            // Before the root element there is only a prolog, which the tokenizer steps over.
            guard case .start(let root)? = try tokenizer.next() else {
                throw notAFeed(context, "XML without a root element")
            }
            switch root.localName {
            case "rss", "RDF":
                return .feed(try RSSReader.read(&tokenizer, root: root, context: context))
            case "feed":
                return .feed(try AtomReader.read(&tokenizer, root: root, context: context))
            case "html":
                return .html(alternates: HTMLPage.alternates(bytes, context: context))
            default:
                throw notAFeed(context, "XML whose root element is <\(root.qualifiedName)>, not <rss> or <feed>")
            }
        } catch let error as XMLTokenizer.SyntaxError {
            if error.isUnsafe {
                throw NewsstandError(.unsafeFeed, "\(context.url.absoluteString) \(error.reason)", underlying: error)
            }
            throw NewsstandError(
                .invalidFeed, "\(context.url.absoluteString) is not a feed (malformed XML: \(error))", underlying: error
            )
        }
    }

    private static func json(_ bytes: UnsafeBufferPointer<UInt8>, _ context: FeedContext) throws -> JSONValue {
        do {
            return try JSONReader.parse(bytes)
        } catch {
            throw NewsstandError(
                .invalidFeed, "\(context.url.absoluteString) is not a feed (malformed JSON: \(error))",
                underlying: error)
        }
    }

    private static func notAFeed(_ context: FeedContext, _ why: String) -> NewsstandError {
        NewsstandError(.invalidFeed, "\(context.url.absoluteString) is not a feed (\(why))")
    }
}
