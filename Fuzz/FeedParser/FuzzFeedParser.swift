// libFuzzer target for the feed parsers, `FeedParser.parse`, built with Sources/Newsstand/Feeds/ and what
// they use (see `make fuzz`). Each input is read as a fetched body without a mapping and through a fixed
// mapping, and as a mapping file applied to a fixed document. Beyond "no crash, no memory error": the only
// errors are the feed codes; what a feed yields keeps the caps (items, assets, field and URL lengths, http
// or https only, trimmed text without control characters); parsing is deterministic; and a document
// written back as RSS reads back as the same items.
import FuzzSupport
import NewsstandCore
import NewsstandFeeds
import Foundation

// Computed, not stored: a lazily initialised global is allocated during some input and reported as its leak.
nonisolated private var feedURL: URL { URL(string: "https://feeds.example.com/shows/feed.xml?x=1") ?? URL(fileURLWithPath: "/") }
nonisolated private var limits: FeedLimits {
    var limits = FeedLimits()
    limits.maxItems = 50
    limits.maxAssetsPerItem = 4
    limits.maxFieldBytes = 64
    limits.maxURLBytes = 256
    return limits
}
/// The README's daily-picture mapping, with more kinds of placeholder: applied to every input.
nonisolated private var mapping: FeedMapping? {
    try? FeedMapping(
        json: Data(
            #"""
            {"title": "T {tooltips.loading}", "items": "images", "item": {"id": "{startdate}",
             "name": "{copyright} {$date} {{x}}", "date": "{startdate}", "dateFormat": "yyyyMMdd",
             "assets": ["{urlbase}_1920x1080.jpg", {"url": "{url}", "sha256": "{hsh}", "unpack": true}]}}
            """#.utf8))
}

/// The document every fuzzed mapping is applied to.
nonisolated private var mappedDocument: Data {
    Data(
        #"""
        {"images": [{"startdate": "20170319", "urlbase": "/az/x", "n": 1.5, "b": true, "list": [1, {"k": "v"}]},
         {"startdate": "2017-03-19", "urlbase": "https://cdn.example.com/y", "n": -3, "d": "2017-03-19T10:00:00Z",
         "t": 1489917600, "s": "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"}],
         "data": [{"list": []}], "title": "x\u0000y"}
        """#.utf8)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFeedParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = Data(UnsafeBufferPointer(start: data, count: size))
    guard let mapping else { fatalError("the fixed mapping does not read") }

    let plain = check(body, mapping: nil)
    guard plain == check(body, mapping: nil) else { fatalError("two parses of the same body differ") }
    if case .feed(let document)? = plain { roundTrip(document) }
    _ = check(body, mapping: mapping)

    if let fuzzedMapping = try? FeedMapping(json: body) {
        _ = check(mappedDocument, mapping: fuzzedMapping)
    }
    return 0
}

/// Parses `body`, checks what comes out, and returns it (nil for an error of a feed code).
private func check(_ body: Data, mapping: FeedMapping?) -> FeedParseResult? {
    let result: FeedParseResult
    do {
        result = try FeedParser.parse(body, url: feedURL, mapping: mapping, limits: limits)
    } catch let error as NewsstandError {
        guard error.code == .invalidFeed || error.code == .unsafeFeed else { fatalError("unexpected error \(error)") }
        guard !error.message.contains("\n") else { fatalError("an error message of several lines: \(error)") }
        return nil
    } catch {
        fatalError("an error that is not a NewsstandError: \(error)")
    }
    switch result {
    case .html(let alternates):
        guard alternates.count <= HTMLPage.maxAlternates, Set(alternates).count == alternates.count else {
            fatalError("alternates over the cap or repeated")
        }
        alternates.forEach(checkURL)
    case .feed(let document):
        guard document.items.count <= limits.maxItems else { fatalError("\(document.items.count) items") }
        checkText(document.title)
        if let moved = document.movedTo {
            checkURL(moved)
            guard moved != feedURL else { fatalError("movedTo is where the feed was fetched") }
        }
        for item in document.items {
            checkText(item.id)
            checkText(item.title)
            guard item.assets.count <= limits.maxAssetsPerItem else { fatalError("\(item.assets.count) assets") }
            for asset in item.assets {
                checkURL(asset.url)
                if let sha256 = asset.sha256, !(AssetRequest.isValidSHA256(sha256) && sha256 == sha256.lowercased()) {
                    fatalError("sha256 \(sha256.debugDescription) kept")
                }
                if let length = asset.length, length < 0 { fatalError("negative length kept") }
                checkText(asset.mimeType)
            }
        }
    }
    return result
}

private func checkText(_ text: String?) {
    guard let text else { return }
    guard !text.isEmpty, text.utf8.count <= limits.maxFieldBytes else {
        fatalError("field of \(text.utf8.count) bytes: \(text.debugDescription)")
    }
    guard text.first != " ", text.last != " ",
        !text.unicodeScalars.contains(where: {
            $0.properties.generalCategory == .control || ($0 != " " && $0.properties.isWhitespace)
        }),
        !text.contains("  ")
    else { fatalError("field not cleaned: \(text.debugDescription)") }
}

private func checkURL(_ url: URL) {
    let text = url.absoluteString
    guard text.utf8.count <= limits.maxURLBytes, (try? AssetRequest.parseURL(text)) != nil else {
        fatalError("URL kept that should not be: \(text.debugDescription)")
    }
}

/// The document written as RSS (every field escaped) reads back as the same items: ids, titles, asset URLs
/// and dates (to the millisecond, the precision written).
private func roundTrip(_ document: FeedDocument) {
    var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><channel>"
    if let title = document.title { xml += "<title>\(escape(title))</title>" }
    for item in document.items {
        xml += "<item>"
        if let id = item.id { xml += "<guid>\(escape(id))</guid>" }
        if let title = item.title { xml += "<title>\(escape(title))</title>" }
        if let date = item.date, let text = rfc3339(date) { xml += "<dc:date>\(text)</dc:date>" }
        for asset in item.assets { xml += "<enclosure url=\"\(escape(asset.url.absoluteString))\"/>" }
        xml += "</item>"
    }
    xml += "</channel></rss>"
    let again: FeedParseResult
    do {
        again = try FeedParser.parse(Data(xml.utf8), url: feedURL, mapping: nil, limits: limits)
    } catch {
        fatalError("a document written back as RSS does not read (\(error)): \(xml)")
    }
    guard case .feed(let reread) = again, reread.title == document.title,
        reread.items.count == document.items.count
    else { fatalError("a document written back as RSS reads differently: \(xml)") }
    for (a, b) in zip(document.items, reread.items) {
        guard a.id == b.id, a.title == b.title, a.assets.map(\.url) == b.assets.map(\.url) else {
            fatalError("an item changed on a round trip: \(a) became \(b)")
        }
        switch (a.date, b.date) {
        case (nil, nil): break
        case (let x?, let y?) where abs(x.timeIntervalSince1970 - y.timeIntervalSince1970) < 0.002: break
        default:
            // A date outside years 1–9999 cannot be written; it is then dropped, which is fine.
            if a.date.flatMap(rfc3339) == nil, b.date == nil { break }
            fatalError(
                "a date changed on a round trip: \(String(describing: a.date)) became \(String(describing: b.date))")
        }
    }
}

/// Escapes by scalar: `replacingOccurrences` matches characters, and "<" followed by a combining mark is
/// one character that is not "<".
private func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

private func rfc3339(_ date: Date) -> String? {
    let seconds = date.timeIntervalSince1970
    guard seconds.isFinite, seconds > -62_135_596_800, seconds < 253_402_300_800 else { return nil }
    let whole = Int64(seconds.rounded(.down))
    let millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
    let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
    let secondOfDay = whole - days * 86_400
    let (year, month, day) = HTTPDate.civil(fromDays: days)
    func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int(secondOfDay / 3600), 2)):"
        + "\(pad(Int(secondOfDay % 3600 / 60), 2)):\(pad(Int(secondOfDay % 60), 2)).\(pad(millis, 3))Z"
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzFeedParser) }
    }
#endif
