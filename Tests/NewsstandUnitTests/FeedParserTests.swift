import Foundation
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// Golden tests of the feed parsers: each `Fixtures/feeds/NAME.EXT` is parsed (as fetched from
/// ``FeedParserTests/defaultURL``, or the `"url"` its expected file names; through `NAME.map.json` when
/// there is one) and the result compared exactly with `NAME.expected.json`. `FEED_GOLDEN_WRITE=1`
/// rewrites the expected files from what the parser returns: review every change by hand.
@Suite(.timeLimit(.minutes(5))) struct FeedParserTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/feeds")
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let defaultURL = "https://feeds.example.com/shows/feed.xml"
    /// Mappings that live outside the fixtures, so that the documented file is the tested one.
    static let sharedMappings = ["mapped-daily-picture": "Samples/mappings/daily-picture.json"]

    /// The fixtures' names: every input file beside an expected one.
    static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? []
        return files.filter { $0.hasSuffix(".expected.json") }.map { String($0.dropLast(".expected.json".count)) }
            .sorted()
    }()

    @Test func thereAreEnoughFixtures() {
        #expect(Self.names.count >= 40)
    }

    @Test(arguments: names)
    func golden(_ name: String) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path)
        let input = try #require(
            files.first {
                $0.hasPrefix(name + ".") && !$0.hasSuffix(".expected.json") && !$0.hasSuffix(".map.json")
                    && $0.dropFirst(name.count + 1).firstIndex(of: ".") == nil
            }, "no input file for \(name)")
        let body = try Data(contentsOf: Self.fixtures.appendingPathComponent(input))
        let expectedURL = Self.fixtures.appendingPathComponent(name + ".expected.json")
        let expectedData = try Data(contentsOf: expectedURL)
        let expected = try Self.json(expectedData)
        guard case .object(let expectedObject) = expected else {
            Testing.Issue.record("\(name).expected.json is not an object")
            return
        }
        let url = try #require(URL(string: expectedObject["url"]?.stringValue ?? Self.defaultURL))

        var mapping: FeedMapping?
        if let shared = Self.sharedMappings[name] {
            mapping = try FeedMapping(json: Data(contentsOf: Self.packageRoot.appendingPathComponent(shared)))
        } else if files.contains(name + ".map.json") {
            mapping = try FeedMapping(json: Data(contentsOf: Self.fixtures.appendingPathComponent(name + ".map.json")))
        }

        var actual: [String: JSONValue]
        do {
            actual = Self.encode(try FeedParser.parse(body, url: url, mapping: mapping))
        } catch let error as NewsstandError {
            actual = ["error": .string(error.code.description), "message": .string(error.message)]
        }
        if let url = expectedObject["url"] { actual["url"] = url }

        let fragment = expectedObject["message"]?.stringValue
        let fragmentHolds = fragment.map {
            actual["message"]?.stringValue?.contains($0) == true && actual["error"] == expectedObject["error"]
        }
        if ProcessInfo.processInfo.environment["FEED_GOLDEN_WRITE"] == "1" {
            // An error's expected file holds a fragment chosen by hand: kept while it still holds.
            if fragmentHolds != true { try Self.pretty(.object(actual)).write(to: expectedURL) }
            return
        }
        if let fragment {
            // Errors: the code exactly, the message by a fragment (it names the URL, byte offsets may move).
            #expect(actual["error"] == expectedObject["error"], "\(name)")
            let message = actual["message"]?.stringValue ?? ""
            #expect(message.contains(fragment), "\(name): \(message)")
        } else {
            #expect(
                JSONValue.object(actual) == expected,
                "\(name): \(String(decoding: Self.pretty(.object(actual)), as: UTF8.self))")
        }
    }

    // MARK: - The README's mapping

    /// The daily-picture mapping shown in the README is `Samples/mappings/daily-picture.json`; this is what
    /// the README says it produces.
    @Test func dailyPictureMappingFromSamples() throws {
        let mapping = try FeedMapping(
            json: Data(contentsOf: Self.packageRoot.appendingPathComponent("Samples/mappings/daily-picture.json")))
        let text =
            #"{"images": [{"startdate": "20170319", "urlbase": "/az/hprichbg/rb/TingSakura_ZH-CN14945610051", "#
            + #""copyright": "…", "hsh": "c4afb61170efde716ed371c02f8db13f"}]}"#
        let body = Data(text.utf8)
        let url = try #require(URL(string: "https://images.example.com/HPImageArchive.aspx?format=js&idx=0&n=1"))
        let result = try FeedParser.parse(body, url: url, mapping: mapping)
        guard case .feed(let document) = result else {
            Testing.Issue.record("not a feed: \(result)")
            return
        }
        #expect(document.format == .mapped)
        #expect(document.title == "Daily picture")
        #expect(document.items.count == 1)
        let item = try #require(document.items.first)
        #expect(item.id == "20170319")
        #expect(item.title == "Daily picture 2017-03-19")
        #expect(item.date == Date(timeIntervalSince1970: 1_489_881_600))
        #expect(
            item.assets.map(\.url.absoluteString) == [
                "https://images.example.com/az/hprichbg/rb/TingSakura_ZH-CN14945610051_1920x1080.jpg"
            ])
    }

    // MARK: - Limits

    @Test func bodyOverTheCapIsUnsafe() throws {
        var limits = FeedLimits()
        limits.maxBodyBytes = 1 << 20
        let body = Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        let error = try #require(throws: NewsstandError.self) {
            try FeedParser.parse(body, url: Self.url, mapping: nil, limits: limits)
        }
        #expect(error.code == .unsafeFeed)
        #expect(error.message.contains("over the feed size cap"))
    }

    /// The default cap (32 MiB): a body one byte over it is refused before any parsing.
    @Test func defaultCapIs32MiB() throws {
        let body = Data(count: (32 << 20) + 1)
        #expect(throws: NewsstandError.self) { try FeedParser.parse(body, url: Self.url, mapping: nil) }
        #expect(FeedLimits().maxBodyBytes == 32 << 20)
    }

    @Test func itemAndAssetLimitsAreHonoured() throws {
        let items = (0..<10).map { n in
            "<item><guid>\(n)</guid>"
                + (0..<5).map { "<enclosure url=\"https://cdn.example.com/\(n)/\($0).pdf\"/>" }.joined() + "</item>"
        }
        let body = Data("<rss><channel>\(items.joined())</channel></rss>".utf8)
        var limits = FeedLimits()
        limits.maxItems = 3
        limits.maxAssetsPerItem = 2
        let document = try #require(try Self.document(body, limits: limits))
        #expect(document.items.map(\.id) == ["0", "1", "2"])
        #expect(document.items.allSatisfy { $0.assets.count == 2 })
        limits.maxItems = -1
        #expect(try Self.document(body, limits: limits)?.items.isEmpty == true)
    }

    @Test func fieldsAreCutAtACharacterBoundary() throws {
        var limits = FeedLimits()
        limits.maxFieldBytes = 5
        // "ab" + "é" (2 bytes) + "👍🏽" (8 bytes, one character): the emoji does not fit and is dropped whole.
        let body = Data(
            ("<rss><channel><item><title>abé👍🏽cd</title>"
                + "<guid>e\u{301}e\u{301}e\u{301}</guid></item></channel></rss>").utf8
        )
        let item = try #require(try Self.document(body, limits: limits)?.items.first)
        #expect(item.title == "abé")
        // "e" + U+0301 is 3 bytes, one character: a byte cut at 5 would keep the second "e" without its accent.
        #expect(item.id == "e\u{301}")
    }

    @Test func overLongURLsAreDropped() throws {
        var limits = FeedLimits()
        limits.maxURLBytes = 40
        let body = Data(
            """
            <rss><channel><item><enclosure url="https://cdn.example.com/short.pdf"/>\
            <enclosure url="https://cdn.example.com/a-rather-longer-name.pdf"/></item></channel></rss>
            """.utf8)
        let item = try #require(try Self.document(body, limits: limits)?.items.first)
        #expect(item.assets.map(\.url.absoluteString) == ["https://cdn.example.com/short.pdf"])
    }

    // MARK: - Robustness

    /// Every prefix of a feed either parses or throws `.invalidFeed`: never a trap, never another error.
    @Test(arguments: ["rss-itunes-podcast.xml", "atom-basic.xml", "jsonfeed-v1.json", "catalog-publisher.json"])
    func everyPrefixIsParsedOrRefused(_ file: String) throws {
        let body = try Data(contentsOf: Self.fixtures.appendingPathComponent(file))
        for length in 0..<body.count {
            do {
                _ = try FeedParser.parse(body.prefix(length), url: Self.url, mapping: nil)
            } catch let error as NewsstandError {
                #expect(error.code == .invalidFeed, "\(file) cut at \(length): \(error)")
            }
        }
    }

    /// A large feed (2,000 items, about 8 MB, as the SPEC's performance target) parses whole and right.
    @Test func largeFeed() throws {
        let body = Self.largeRSS(items: 2000, descriptionBytes: 3800)
        #expect(body.count > 8_000_000)
        let document = try #require(try Self.document(body))
        #expect(document.items.count == 2000)
        #expect(document.items.last?.id == "item-1999")
        #expect(document.items.last?.assets.first?.url.absoluteString == "https://cdn.example.com/issues/1999.pdf")
    }

    // MARK: - Dates

    @Test(arguments: [
        ("Sun, 19 Mar 2017 10:00:00 GMT", 1_489_917_600.0),
        ("19 Mar 2017 10:00 +0000", 1_489_917_600),
        ("Sun, 19 Mar 17 05:00:00 EST", 1_489_917_600),
        ("Sun, 19 Mar 2017 03:00:00 PDT", 1_489_917_600),
        ("Sun, 19 Mar 2017 11:00:00 +01:00", 1_489_917_600),
        ("Sun, 19 Mar 2017 10:00:00 A", 1_489_917_600),
        ("Sun, 19 Sept 2017 10:00:00 GMT", 1_505_815_200),
    ])
    func rfc822(_ text: String, _ seconds: Double) {
        #expect(FeedDate.rfc822(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: [
        "", "Sun", "19 Mar", "Sun, 32 Mar 2017 10:00:00 GMT", "Sun, 19 Foo 2017 10:00:00 GMT",
        "Sun, 19 Mar 2017 10:00:00 +2500", "Sun, 19 Mar 2017 10:60:00 GMT", "Sun, 19 Mar 99999 10:00:00 GMT",
        "Sun, 19 Mar 2017 10:00:00 GMT GMT", "Sun, 19 Mar 0000 10:00:00 GMT", "１９ Mar 2017",
    ])
    func rfc822Refused(_ text: String) {
        #expect(FeedDate.rfc822(text) == nil)
    }

    @Test(arguments: [
        ("2017-03-19", 1_489_881_600.0), ("2017-03-19T10:00:00Z", 1_489_917_600),
        ("2017-03-19 11:00+01:00", 1_489_917_600),
        ("2017-03-19T10:00:00.5Z", 1_489_917_600.5), ("2017-03-19T10:00:00-0130", 1_489_923_000),
    ])
    func rfc3339(_ text: String, _ seconds: Double) {
        #expect(FeedDate.rfc3339(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: ["2017-3-19", "2017-03-19T10:00:00+", "2017-03-19T10Z", "2017-13-01", "2017-03-19X10:00"])
    func rfc3339Refused(_ text: String) {
        #expect(FeedDate.rfc3339(text) == nil)
    }

    // MARK: - Mappings

    @Test(arguments: [
        ("not json", "not valid JSON"),
        ("[]", "not a JSON object"),
        (#"{"item": {"name": "x"}, "extra": 1}"#, "unknown key \"extra\""),
        (#"{"items": "a"}"#, "\"item\" is missing"),
        (#"{"item": {"id": "{id}"}}"#, "\"item.name\" is missing"),
        (#"{"item": {"name": "{unclosed"}}"#, "without its"),
        (#"{"item": {"name": "lone } brace"}}"#, "lone"),
        (#"{"item": {"name": "{}"}}"#, "empty placeholder"),
        (#"{"item": {"name": "{a..b}"}}"#, "empty key"),
        (#"{"item": {"name": "x", "dateFormat": "dd/MM"}}"#, "needs yyyy, MM and dd"),
        (#"{"item": {"name": "x", "dateFormat": "yyyy-MM-dd EEE"}}"#, "\"EEE\""),
        (#"{"item": {"name": "x", "dateFormat": "yyyy-MM-dd'T"}}"#, "unclosed quote"),
        (#"{"item": {"name": "x", "assets": [1]}}"#, "neither a URL template nor an object"),
        (#"{"item": {"name": "x", "assets": [{"sha256": "{s}"}]}}"#, "url\" is missing"),
        (#"{"item": {"name": "x", "assets": [{"url": "{u}", "unpack": "yes"}]}}"#, "not true or false"),
        (#"{"items": 3, "item": {"name": "x"}}"#, "not a key path"),
    ])
    func invalidMapping(_ json: String, _ fragment: String) {
        let error = #expect(throws: NewsstandError.self) { try FeedMapping(json: Data(json.utf8)) }
        #expect(error?.code == .invalidMapping)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
    }

    @Test func mappingDateFormats() throws {
        func date(_ format: String, _ text: String) throws -> Date? {
            let json = #"{"item": {"name": "x", "date": "{d}", "dateFormat": "\#(format)"}}"#
            let mapping = try FeedMapping(json: Data(json.utf8))
            return mapping.dateFormat.date(text)
        }
        #expect(try date("yyyyMMdd", "20170319") == Date(timeIntervalSince1970: 1_489_881_600))
        #expect(
            try date("yyyy-MM-dd'T'HH:mm:ss.SSS", "2017-03-19T10:00:00.250")
                == Date(timeIntervalSince1970: 1_489_917_600.25))
        #expect(try date("dd.MM.yyyy", "19.03.2017") == Date(timeIntervalSince1970: 1_489_881_600))
        #expect(try date("unix-ms", "1489917600000") == Date(timeIntervalSince1970: 1_489_917_600))
        #expect(try date("rfc822", "Sun, 19 Mar 2017 10:00:00 GMT") == Date(timeIntervalSince1970: 1_489_917_600))
        #expect(try date("yyyyMMdd", "2017031") == nil)
        #expect(try date("yyyyMMdd", "201703190") == nil)
        #expect(try date("yyyyMMdd", "20170230") == nil)
        #expect(try date("unix", "1e300") == nil)
        #expect(try date("unix", "nan") == nil)
    }

    /// A mapping given for a body that is not JSON is an invalid feed, not a trap or a guess at XML.
    @Test func mappingNeedsJSON() throws {
        let mapping = try FeedMapping(json: Data(#"{"item": {"name": "{a}"}}"#.utf8))
        let error = #expect(throws: NewsstandError.self) {
            try FeedParser.parse(Data("<rss/>".utf8), url: Self.url, mapping: mapping)
        }
        #expect(error?.code == .invalidFeed)
    }

    // MARK: - Tokenizer

    @Test func namespacesAreResolvedByScope() throws {
        let text = #"<a xmlns="urn:d" xmlns:p="urn:p"><p:b p:x="1" y="2"/><c xmlns="" xmlns:p="urn:q"><p:d/></c></a>"#
        var names: [String] = []
        try Array(text.utf8).withUnsafeBufferPointer { bytes in
            var tokenizer = XMLTokenizer(bytes: bytes)
            while let event = try tokenizer.next() {
                if case .start(let tag) = event {
                    names.append("\(tag.namespace ?? "-") \(tag.localName)")
                    if tag.localName == "b" {
                        #expect(tag.attribute("x", namespace: "urn:p") == "1")
                        #expect(tag.attribute("y") == "2")
                    }
                }
            }
        }
        #expect(names == ["urn:d a", "urn:p b", "- c", "urn:q d"])
    }

    // MARK: - Helpers

    static let url = URL(string: defaultURL) ?? URL(fileURLWithPath: "/")

    static func document(_ body: Data, limits: FeedLimits = FeedLimits()) throws -> FeedDocument? {
        guard case .feed(let document) = try FeedParser.parse(body, url: url, mapping: nil, limits: limits) else {
            return nil
        }
        return document
    }

    /// An RSS feed of `items` items, each with a description of about `descriptionBytes` bytes of escaped
    /// HTML: the shape of a real podcast or magazine feed.
    static func largeRSS(items: Int, descriptionBytes: Int) -> Data {
        let paragraph = String(
            repeating: "&lt;p&gt;Lorem ipsum dolor sit amet, consectetur &amp; adipiscing elit.&lt;/p&gt; ",
            count: descriptionBytes / 80)
        var text =
            #"<?xml version="1.0" encoding="UTF-8"?>"#
            + #"<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">"#
            + "<channel><title>Large</title>"
        text.reserveCapacity(items * (descriptionBytes + 600))
        for n in 0..<items {
            text += """
                <item><title>Issue \(n): a title of ordinary length</title><guid isPermaLink="false">item-\(n)</guid>\
                <pubDate>Sun, 19 Mar 2017 10:00:00 GMT</pubDate><itunes:duration>00:42:10</itunes:duration>\
                <description>\(paragraph)</description>\
                <enclosure url="https://cdn.example.com/issues/\(n).pdf" length="123456" type="application/pdf"/></item>

                """
        }
        text += "</channel></rss>"
        return Data(text.utf8)
    }

    static func json(_ data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { raw in try JSONReader.parse(raw.bindMemory(to: UInt8.self)) }
    }

    /// A result as the expected files write it: nil fields of assets left out, of items written as null.
    static func encode(_ result: FeedParseResult) -> [String: JSONValue] {
        switch result {
        case .html(let alternates):
            return ["html": .array(alternates.map { .string($0.absoluteString) })]
        case .feed(let document):
            let items: [JSONValue] = document.items.map { item in
                func encode(_ asset: FeedAsset) -> JSONValue {
                    var object: [String: JSONValue] = ["url": .string(asset.url.absoluteString)]
                    if let sha256 = asset.sha256 { object["sha256"] = .string(sha256) }
                    if let unpack = asset.unpack { object["unpack"] = .bool(unpack) }
                    if let length = asset.length { object["length"] = .integer(length) }
                    if let mimeType = asset.mimeType { object["mimeType"] = .string(mimeType) }
                    return .object(object)
                }
                var object: [String: JSONValue] = [
                    "id": item.id.map(JSONValue.string) ?? .null,
                    "title": item.title.map(JSONValue.string) ?? .null,
                    "date": item.date.map { .string(iso8601($0)) } ?? .null,
                    "assets": .array(item.assets.map(encode)),
                ]
                // Written only when present, so the fixtures of feeds without them stay as they were.
                if !item.extras.isEmpty { object["extras"] = .array(item.extras.map(encode)) }
                if !item.variants.isEmpty { object["variants"] = .array(item.variants.map(encode)) }
                return .object(object)
            }
            var object: [String: JSONValue] = [
                "format": .string(document.format.rawValue),
                "title": document.title.map(JSONValue.string) ?? .null,
                "movedTo": document.movedTo.map { .string($0.absoluteString) } ?? .null,
                "items": .array(items),
            ]
            if let guid = document.podcastGUID { object["podcastGUID"] = .string(guid) }
            return object
        }
    }

    /// ISO 8601 in UTC, with milliseconds only when there are any.
    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let whole = date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970
        formatter.formatOptions = whole ? [.withInternetDateTime] : [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func pretty(_ value: JSONValue) -> Data {
        func any(_ value: JSONValue) -> Any {
            switch value {
            case .null: return NSNull()
            case .bool(let flag): return flag
            case .integer(let number): return number
            case .double(let number): return number
            case .string(let text): return text
            case .array(let list): return list.map(any)
            case .object(let object): return object.mapValues(any)
            }
        }
        let data =
            (try? JSONSerialization.data(
                withJSONObject: any(value), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return data + Data("\n".utf8)
    }
}
