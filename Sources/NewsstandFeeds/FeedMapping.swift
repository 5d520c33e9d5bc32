import Foundation
import NewsstandCore

/// How to read dated issues out of a publisher's own JSON: a small declarative file (`subscribe --map FILE`).
///
/// ```json
/// {
///   "title": "Daily picture",
///   "items": "images",
///   "item": {
///     "id": "{startdate}",
///     "name": "Daily picture {$date}",
///     "date": "{startdate}",
///     "dateFormat": "yyyyMMdd",
///     "assets": ["{urlbase}_1920x1080.jpg"]
///   }
/// }
/// ```
/// - `items`: the key path of the array of items (`a.b.0.c`: keys, or indexes into arrays); absent or
///   `""` when the document itself is the array.
/// - `item`: templates read in each item. A template is text with `{key.path}` placeholders (`{{` and
///   `}}` are literal braces); `{$date}` is the item's date as `YYYY-MM-DD`. A placeholder that finds
///   nothing, or an array or object, leaves that field out (an asset: that asset).
///   - `name` (required): the name. `id`: the item's identifier. `date` with `dateFormat`: a
///     pattern of `yyyy`, `MM`, `dd`, `HH`, `mm`, `ss`, `SSS` and literal characters (`'T'` quotes
///     letters), read as UTC, or one of `rfc3339` (the default), `rfc822`, `unix` (seconds), `unix-ms`.
///   - `image`: a URL template of the item's picture, its issue's cover.
///   - `assets`: URL templates, resolved against the feed's URL; or objects `{"url", "sha256", "unpack"}`
///     where `sha256` is a template and `unpack` is true or false.
/// - `title`: the feed's title, a template over the whole document (usually plain text).
///
/// Unknown keys are refused, so that a misspelt one is not silently ignored.
public struct FeedMapping: Sendable, Hashable {
    /// The mapping file's bytes, as given: what a subscription stores to read the feed again.
    public let source: Data

    var title: Template?
    var items: KeyPath
    var id: Template?
    var name: Template
    var date: Template?
    /// The item's image (its issue's cover): a URL template, resolved against the feed's URL.
    var image: Template?
    var dateFormat: DateFormat
    var assets: [AssetTemplate]

    struct AssetTemplate: Sendable, Hashable {
        var url: Template
        var sha256: Template?
        var unpack: Bool?
    }

    /// Reads a mapping file.
    /// - Parameter json: The file's bytes: one JSON object as above.
    /// - Throws: `NewsstandError` `.invalidMapping` naming what is wrong (not JSON, a missing or unknown
    ///   key, a value of the wrong type, a malformed template or date format).
    /// - Does not block beyond parsing the bytes given; callable from any isolation.
    public init(json: Data) throws {
        source = json
        let value: JSONValue
        do {
            value = try json.withUnsafeBytes { raw in try JSONReader.parse(raw.bindMemory(to: UInt8.self)) }
        } catch {
            throw NewsstandError(.invalidMapping, "the mapping is not valid JSON (\(error))", underlying: error)
        }
        guard case .object(let root) = value else { throw Self.invalid("the mapping is not a JSON object") }
        try Self.refuseUnknownKeys(root, allowed: ["title", "items", "item"], in: "the mapping")
        title = try Self.template(root["title"], "title")
        switch root["items"] {
        case nil, .null?: items = KeyPath(segments: [])
        case .string(let path)?: items = try KeyPath(path, what: "items")
        default: throw Self.invalid("\"items\" is not a key path string")
        }
        guard case .object(let item)? = root["item"] else {
            throw Self.invalid("\"item\" is missing or not an object")
        }
        try Self.refuseUnknownKeys(item, allowed: ["id", "name", "date", "dateFormat", "assets", "image"], in: "\"item\"")
        guard let name = try Self.template(item["name"], "item.name") else {
            throw Self.invalid("\"item.name\" is missing")
        }
        self.name = name
        id = try Self.template(item["id"], "item.id")
        date = try Self.template(item["date"], "item.date")
        image = try Self.template(item["image"], "item.image")
        switch item["dateFormat"] {
        case nil, .null?: dateFormat = .rfc3339
        case .string(let text)?: dateFormat = try DateFormat(text)
        default: throw Self.invalid("\"item.dateFormat\" is not a string")
        }
        var assets: [AssetTemplate] = []
        switch item["assets"] {
        case nil, .null?: break
        case .array(let list)?:
            for (n, entry) in list.enumerated() {
                let what = "item.assets[\(n)]"
                switch entry {
                case .string:
                    guard let url = try Self.template(entry, what) else { throw Self.invalid("\"\(what)\" is empty") }
                    assets.append(AssetTemplate(url: url, sha256: nil, unpack: nil))
                case .object(let object):
                    try Self.refuseUnknownKeys(object, allowed: ["url", "sha256", "unpack"], in: "\"\(what)\"")
                    guard let url = try Self.template(object["url"], "\(what).url") else {
                        throw Self.invalid("\"\(what).url\" is missing")
                    }
                    var unpack: Bool?
                    switch object["unpack"] {
                    case nil, .null?: break
                    case .bool(let flag)?: unpack = flag
                    default: throw Self.invalid("\"\(what).unpack\" is not true or false")
                    }
                    assets.append(
                        AssetTemplate(
                            url: url, sha256: try Self.template(object["sha256"], "\(what).sha256"),
                            unpack: unpack))
                default:
                    throw Self.invalid("\"\(what)\" is neither a URL template nor an object")
                }
            }
        default: throw Self.invalid("\"item.assets\" is not an array")
        }
        self.assets = assets
    }

    public static func == (lhs: FeedMapping, rhs: FeedMapping) -> Bool { lhs.source == rhs.source }
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }

    private static func invalid(_ message: String) -> NewsstandError { NewsstandError(.invalidMapping, message) }

    private static func refuseUnknownKeys(_ object: [String: JSONValue], allowed: Set<String>, in place: String) throws
    {
        if let unknown = object.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw invalid(
                "\(place) has an unknown key \(unknown.debugDescription) "
                    + "(known: \(allowed.sorted().joined(separator: ", ")))"
            )
        }
    }

    private static func template(_ value: JSONValue?, _ what: String) throws -> Template? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return try Template(text, what: what)
        default: throw invalid("\"\(what)\" is not a template string")
        }
    }

    // MARK: - Parts

    /// A dot-separated path into JSON: object keys, or indexes into arrays.
    struct KeyPath: Sendable, Hashable {
        var segments: [String]

        init(segments: [String]) { self.segments = segments }

        init(_ text: String, what: String) throws {
            if text.isEmpty {
                segments = []
                return
            }
            segments = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !segments.contains(where: \.isEmpty) else {
                throw FeedMapping.invalid("\"\(what)\" has an empty key in the path \(text.debugDescription)")
            }
        }

        func value(in root: JSONValue) -> JSONValue? {
            var current = root
            for segment in segments {
                switch current {
                case .object(let object):
                    guard let next = object[segment] else { return nil }
                    current = next
                case .array(let list):
                    guard let index = Int(segment), list.indices.contains(index) else { return nil }
                    current = list[index]
                default:
                    return nil
                }
            }
            return current
        }
    }

    /// Text with `{key.path}` placeholders.
    struct Template: Sendable, Hashable {
        enum Part: Sendable, Hashable {
            case literal(String)
            case value(KeyPath)
            case date
        }

        var parts: [Part]

        init(_ text: String, what: String) throws {
            var parts: [Part] = []
            var literal = ""
            var rest = Substring(text)
            while let brace = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
                literal += rest[..<brace]
                let after = rest[rest.index(after: brace)...]
                if rest[brace] == "}" {
                    guard after.first == "}" else {
                        throw FeedMapping.invalid("\"\(what)\" has a lone \"}\" (write \"}}\" for a brace)")
                    }
                    literal += "}"
                    rest = after.dropFirst()
                    continue
                }
                if after.first == "{" {
                    literal += "{"
                    rest = after.dropFirst()
                    continue
                }
                guard let close = after.firstIndex(of: "}") else {
                    throw FeedMapping.invalid("\"\(what)\" has a \"{\" without its \"}\"")
                }
                let path = String(after[..<close])
                if !literal.isEmpty { parts.append(.literal(literal)) }
                literal = ""
                if path == "$date" {
                    parts.append(.date)
                } else {
                    guard !path.isEmpty else { throw FeedMapping.invalid("\"\(what)\" has an empty placeholder {}") }
                    parts.append(.value(try KeyPath(path, what: what)))
                }
                rest = after[after.index(after: close)...]
            }
            literal += rest
            if !literal.isEmpty { parts.append(.literal(literal)) }
            guard !parts.isEmpty else { throw FeedMapping.invalid("\"\(what)\" is empty") }
            self.parts = parts
        }

        /// The text for `item`; nil when a placeholder finds no scalar (or `{$date}` no date).
        func render(_ item: JSONValue, date: Date? = nil) -> String? {
            var out = ""
            for part in parts {
                switch part {
                case .literal(let text): out += text
                case .value(let path):
                    guard let text = path.value(in: item)?.text else { return nil }
                    out += text
                case .date:
                    guard let date, let day = FeedDate.day(date) else { return nil }
                    out += day
                }
            }
            return out
        }
    }

    /// How a mapping's `date` is written.
    enum DateFormat: Sendable, Hashable {
        case rfc3339, rfc822, unixSeconds, unixMilliseconds
        case pattern([PatternPart])

        enum PatternPart: Sendable, Hashable {
            case literal(UInt8)
            /// A field of `width` digits (`SSS`: any number of fraction digits).
            case year, month, day, hour, minute, second, fraction
        }

        init(_ text: String) throws {
            switch text.lowercased() {
            case "rfc3339", "iso8601": self = .rfc3339
            case "rfc822", "rfc2822": self = .rfc822
            case "unix": self = .unixSeconds
            case "unix-ms": self = .unixMilliseconds
            default: self = .pattern(try DateFormat.pattern(text))
            }
        }

        private static func pattern(_ text: String) throws -> [PatternPart] {
            let bytes = Array(text.utf8)
            var parts: [PatternPart] = []
            var k = 0
            while k < bytes.count {
                let byte = bytes[k]
                if byte == UInt8(ascii: "'") {
                    k += 1
                    while k < bytes.count, bytes[k] != UInt8(ascii: "'") {
                        parts.append(.literal(bytes[k]))
                        k += 1
                    }
                    guard k < bytes.count else {
                        throw FeedMapping.invalid("\"item.dateFormat\" has an unclosed quote: \(text.debugDescription)")
                    }
                    k += 1
                    continue
                }
                let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
                guard isLetter else {
                    parts.append(.literal(byte))
                    k += 1
                    continue
                }
                var run = 1
                while k + run < bytes.count, bytes[k + run] == byte { run += 1 }
                let field: PatternPart
                switch (byte, run) {
                case (UInt8(ascii: "y"), 4): field = .year
                case (UInt8(ascii: "M"), 2): field = .month
                case (UInt8(ascii: "d"), 2): field = .day
                case (UInt8(ascii: "H"), 2): field = .hour
                case (UInt8(ascii: "m"), 2): field = .minute
                case (UInt8(ascii: "s"), 2): field = .second
                case (UInt8(ascii: "S"), _): field = .fraction
                default:
                    let letters = String(decoding: bytes[k..<(k + run)], as: UTF8.self)
                    throw FeedMapping.invalid(
                        "\"item.dateFormat\" \(text.debugDescription) has \(letters.debugDescription), which is not "
                            + "one of yyyy, MM, dd, HH, mm, ss, SSS (quote literal letters: 'T')")
                }
                parts.append(field)
                k += run
            }
            for required in [PatternPart.year, .month, .day] where !parts.contains(required) {
                throw FeedMapping.invalid(
                    "\"item.dateFormat\" \(text.debugDescription) needs yyyy, MM and dd "
                        + "(or rfc3339, rfc822, unix, unix-ms)"
                )
            }
            return parts
        }

        /// The instant `text` names in this format (patterns in UTC); nil when it does not match.
        func date(_ text: String) -> Date? {
            switch self {
            case .rfc3339: return FeedDate.rfc3339(text)
            case .rfc822: return FeedDate.rfc822(text)
            case .unixSeconds, .unixMilliseconds:
                guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
                    return nil
                }
                let seconds = self == .unixSeconds ? number : number / 1000
                // Years 1–9999, as everywhere else.
                guard seconds > -62_135_596_800, seconds < 253_402_300_800 else { return nil }
                return Date(timeIntervalSince1970: seconds)
            case .pattern(let parts):
                return DateFormat.match(parts, Array(text.utf8.prefix(256)))
            }
        }

        private static func match(_ parts: [PatternPart], _ bytes: [UInt8]) -> Date? {
            var values = (year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0)
            var fraction = 0.0
            var k = 0
            func digits(_ count: Int) -> Int? {
                guard k + count <= bytes.count, let value = FeedDate.number(bytes[k..<(k + count)]) else { return nil }
                k += count
                return value
            }
            for part in parts {
                switch part {
                case .literal(let byte):
                    guard k < bytes.count, bytes[k] == byte else { return nil }
                    k += 1
                case .year:
                    guard let v = digits(4) else { return nil }
                    values.year = v
                case .month:
                    guard let v = digits(2) else { return nil }
                    values.month = v
                case .day:
                    guard let v = digits(2) else { return nil }
                    values.day = v
                case .hour:
                    guard let v = digits(2), v < 24 else { return nil }
                    values.hour = v
                case .minute:
                    guard let v = digits(2), v < 60 else { return nil }
                    values.minute = v
                case .second:
                    guard let v = digits(2), v < 61 else { return nil }
                    values.second = min(v, 59)
                case .fraction:
                    var scale = 0.1
                    let start = k
                    while k < bytes.count, FeedDate.isDigit(bytes[k]) {
                        if k - start < 9 { fraction += Double(bytes[k] - UInt8(ascii: "0")) * scale }
                        scale /= 10
                        k += 1
                    }
                    guard k > start else { return nil }
                }
            }
            guard k == bytes.count else { return nil }
            return FeedDate.make(
                year: values.year, month: values.month, day: values.day, hour: values.hour, minute: values.minute,
                second: values.second, fraction: fraction, offsetSeconds: 0)
        }
    }
}
