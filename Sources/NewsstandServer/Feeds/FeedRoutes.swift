import Foundation
import Hummingbird
import Newsstand
import NewsstandCore
import NewsstandDownload

/// Feeds out: an OPDS 1.2 catalog of the issues (for e-readers) and an RSS 2.0 feed per subscription and
/// per publication of the issues held (for podcast apps), each item with `guid`, `pubDate` and an
/// `enclosure` with `length` and `type` pointing at `/files/…` (served with Range).
enum FeedRoutes {
    static let pageSize = 50

    static func add(to router: Router<ServeContext>, state: ServerState) {
        router.get("/opds") { request, context -> Response in
            let offset = max(0, Int(Responses.query(request)["offset"] ?? "") ?? 0)
            let (items, total) = try await runBlocking { try state.feedItems(offset: offset, limit: pageSize, filtered: false) }
            return xml(OPDS.catalog(items, total: total, offset: offset, base: "http://\(context.authority)"), type: "application/atom+xml;profile=opds-catalog;kind=acquisition")
        }
        router.get("/feeds/subscriptions/:file") { _, context -> Response in
            let file = context.parameters.get("file") ?? ""
            guard file.hasSuffix(".rss") else { throw HTTPError(.notFound) }
            let subscription = try await SubscriptionActions.find(String(file.dropLast(4)), state: state)
            let id = subscription.id
            let (items, _) = try await runBlocking {
                try state.feedItems(limit: pageSize, where: { $0.subscription == id }, filtered: true)
            }
            return xml(RSS.feed(title: subscription.name, link: "http://\(context.authority)/?subscription=\(Form.encode(id))", items: items, base: "http://\(context.authority)"), type: "application/rss+xml; charset=utf-8")
        }
        router.get("/feeds/publications/:file") { _, context -> Response in
            let file = context.parameters.get("file") ?? ""
            guard file.hasSuffix(".rss"), let publication = String(file.dropLast(4)).removingPercentEncoding else {
                throw HTTPError(.notFound)
            }
            let (items, total) = try await runBlocking {
                try state.feedItems(limit: pageSize, where: { $0.publication == publication }, filtered: true)
            }
            guard total > 0 else { throw HTTPError(.notFound, message: "no issues of that publication") }
            return xml(RSS.feed(title: publication, link: "http://\(context.authority)/?publication=\(Form.encode(publication))", items: items, base: "http://\(context.authority)"), type: "application/rss+xml; charset=utf-8")
        }
    }

    static func xml(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

enum RSS {
    static func feed(title: String, link: String, items: [FeedItem], base: String) -> String {
        let entries = items.map { item in
            var enclosure = ""
            if let file = item.file {
                let url = base + IssuePageView.fileURL(key: item.key, relative: file.relative)
                enclosure = "<enclosure url=\"\(HTML.escape(url))\" length=\"\(file.length)\" type=\"\(HTML.escape(file.type))\"/>"
            }
            return """
                <item><title>\(HTML.escape(item.issue.name))</title><link>\(HTML.escape(base + "/issues/" + item.key))</link>\
                <guid isPermaLink="false">\(item.key)</guid><pubDate>\(item.rfc822Date)</pubDate>\(enclosure)</item>
                """
        }.joined(separator: "\n")
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>\(HTML.escape(title))</title><link>\(HTML.escape(link))</link>\
            <description>Issues of \(HTML.escape(title)) held by this library</description>
            \(entries)
            </channel></rss>
            """
    }
}

enum OPDS {
    static func catalog(_ items: [FeedItem], total: Int, offset: Int, base: String) -> String {
        let updated = Date().formatted(Date.ISO8601FormatStyle())
        let entries = items.map { item in
            var links = "<link rel=\"http://opds-spec.org/image\" href=\"\(base)/covers/\(item.key)?size=1024\"/>"
            links += "<link rel=\"http://opds-spec.org/image/thumbnail\" href=\"\(base)/covers/\(item.key)\"/>"
            if let file = item.file {
                let url = base + IssuePageView.fileURL(key: item.key, relative: file.relative)
                links += "<link rel=\"http://opds-spec.org/acquisition\" href=\"\(HTML.escape(url))\" type=\"\(HTML.escape(file.type))\" length=\"\(file.length)\"/>"
            }
            return """
                <entry><title>\(HTML.escape(item.issue.name))</title><id>urn:issues:\(item.key)</id>\
                <updated>\(item.iso8601Date)</updated><author><name>\(HTML.escape(item.issue.publicationName))</name></author>\
                <dc:issued>\(item.issue.date.description)</dc:issued>\(links)</entry>
                """
        }.joined(separator: "\n")
        var navigation = "<link rel=\"self\" href=\"\(base)/opds\(offset > 0 ? "?offset=\(offset)" : "")\" type=\"application/atom+xml;profile=opds-catalog;kind=acquisition\"/>"
        navigation += "<link rel=\"start\" href=\"\(base)/opds\" type=\"application/atom+xml;profile=opds-catalog;kind=acquisition\"/>"
        if offset + items.count < total {
            navigation += "<link rel=\"next\" href=\"\(base)/opds?offset=\(offset + FeedRoutes.pageSize)\" type=\"application/atom+xml;profile=opds-catalog;kind=acquisition\"/>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/terms/" xmlns:opds="http://opds-spec.org/2010/catalog">
            <id>urn:issues:library</id><title>issues</title><updated>\(updated)</updated>\(navigation)
            \(entries)
            </feed>
            """
    }
}
