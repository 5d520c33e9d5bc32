import Foundation

/// An HTML page where a feed was expected: recognised by its start, and read leniently (HTML need not be
/// well-formed XML) for the feeds it links: `<link rel="alternate" type="application/rss+xml" href="…">`.
package enum HTMLPage {
    static let feedTypes: Set<String> = [
        "application/rss+xml", "application/atom+xml", "application/feed+json", "application/json",
    ]
    /// The most alternates kept from one page.
    package static let maxAlternates = 32

    /// True when `bytes`, after an XML declaration, comments and whitespace, start with an `<html` tag, or
    /// with an HTML doctype not followed by a feed's root (`<rss`, `<feed`, `<rdf:RDF`): publishers put
    /// XHTML's DOCTYPE on RSS and Atom documents, which stay feeds.
    static func looksLikeHTML(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = Scanner(bytes: bytes)
        var htmlDoctype = false
        // Only the prolog is looked at: a page's first tag comes early.
        while scanner.i < min(bytes.count, 1 << 16) {
            scanner.skipWhitespace()
            if scanner.hasPrefix("<?") {
                scanner.skip(past: "?>")
            } else if scanner.hasPrefix("<!--") {
                scanner.skip(past: "-->")
            } else if scanner.hasPrefix("<!doctype") {
                htmlDoctype = htmlDoctype || scanner.hasPrefix("<!doctype html")
                scanner.skipDoctype()
            } else if scanner.hasTag("rss") || scanner.hasTag("feed") || scanner.hasTag("rdf:rdf") {
                return false
            } else {
                return htmlDoctype || scanner.hasTag("html")
            }
        }
        return htmlDoctype
    }

    /// The page's feed links, in document order, resolved against its `<base href>` (else `url`); only
    /// http and https ones, each once. Commented-out links are not read.
    static func alternates(_ bytes: UnsafeBufferPointer<UInt8>, context: FeedContext) -> [URL] {
        var scanner = Scanner(bytes: bytes)
        var base: URL?
        var found: [URL] = []
        while scanner.i < bytes.count, found.count < maxAlternates {
            guard bytes[scanner.i] == UInt8(ascii: "<") else {
                scanner.i += 1
                continue
            }
            if scanner.hasPrefix("<!--") {
                scanner.skip(past: "-->")
            } else if scanner.hasTag("base") {
                let attributes = scanner.tagAttributes()
                if base == nil, let href = attributes["href"] {
                    base = URL(string: FeedContext.percentEncodeIllegal(href), relativeTo: context.url)?.absoluteURL
                }
            } else if scanner.hasTag("link") {
                let attributes = scanner.tagAttributes()
                let rel = attributes["rel"]?.lowercased().split(whereSeparator: \.isWhitespace) ?? []
                let type = attributes["type"]?.split(separator: ";").first?
                    .trimmingCharacters(in: .whitespaces).lowercased()
                guard rel.contains("alternate"), let type, feedTypes.contains(type),
                    let url = context.assetURL(attributes["href"], base: base), !found.contains(url)
                else { continue }
                found.append(url)
            } else {
                scanner.i += 1
            }
        }
        return found
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func skipWhitespace() {
            while i < bytes.count, bytes[i] == 0x20 || (0x09...0x0D).contains(bytes[i]) { i += 1 }
        }

        func hasPrefix(_ text: String) -> Bool {
            let utf8 = text.utf8
            guard i + utf8.count <= bytes.count else { return false }
            return zip(bytes[i...], utf8).allSatisfy { lowercase($0) == $1 }
        }

        /// `<name` followed by whitespace, `/` or `>`.
        func hasTag(_ name: String) -> Bool {
            guard hasPrefix("<" + name) else { return false }
            let end = i + 1 + name.utf8.count
            guard end < bytes.count else { return false }
            let next = bytes[end]
            return next == 0x20 || (0x09...0x0D).contains(next) || next == UInt8(ascii: "/")
                || next == UInt8(ascii: ">")
        }

        /// Moves past a DOCTYPE: its `>`, not one inside its internal subset (`[…]`) or a quoted literal.
        mutating func skipDoctype() {
            var inSubset = false
            var quote: UInt8?
            while i < bytes.count {
                let byte = bytes[i]
                i += 1
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "[") {
                    inSubset = true
                } else if byte == UInt8(ascii: "]") {
                    inSubset = false
                } else if byte == UInt8(ascii: ">"), !inSubset {
                    return
                }
            }
        }

        mutating func skip(past terminator: String) {
            while i < bytes.count, !hasPrefix(terminator) { i += 1 }
            i = min(bytes.count, i + terminator.utf8.count)
        }

        /// The attributes of the tag at `i` (names lowercased, values with entities replaced), moving past it.
        mutating func tagAttributes() -> [String: String] {
            i += 1
            while i < bytes.count, !isDelimiter(bytes[i]) { i += 1 }  // the tag name
            var attributes: [String: String] = [:]
            while i < bytes.count {
                skipWhitespace()
                guard i < bytes.count, bytes[i] != UInt8(ascii: ">") else { break }
                if bytes[i] == UInt8(ascii: "/") {
                    i += 1
                    continue
                }
                let nameStart = i
                while i < bytes.count, !isDelimiter(bytes[i]), bytes[i] != UInt8(ascii: "=") { i += 1 }
                let name = String(decoding: bytes[nameStart..<i].map(lowercase), as: UTF8.self)
                if nameStart == i { i += 1 }  // a stray quote or `=`: step over it
                skipWhitespace()
                var value = ""
                if i < bytes.count, bytes[i] == UInt8(ascii: "=") {
                    i += 1
                    skipWhitespace()
                    guard i < bytes.count else { break }
                    let quote = bytes[i]
                    let valueStart: Int
                    if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                        i += 1
                        valueStart = i
                        while i < bytes.count, bytes[i] != quote { i += 1 }
                    } else {
                        valueStart = i  // unquoted: up to whitespace or `>` (a `/` belongs to it)
                        while i < bytes.count, bytes[i] != UInt8(ascii: ">"), bytes[i] != 0x20,
                            !(0x09...0x0D).contains(bytes[i])
                        {
                            i += 1
                        }
                    }
                    value = HTMLText.decodeEntities(
                        String(decoding: UnsafeBufferPointer(rebasing: bytes[valueStart..<i]), as: UTF8.self))
                    if i < bytes.count, bytes[i] == quote { i += 1 }
                }
                if !name.isEmpty, attributes[name] == nil { attributes[name] = value }
            }
            if i < bytes.count { i += 1 }
            return attributes
        }

        private func isDelimiter(_ byte: UInt8) -> Bool {
            byte == 0x20 || (0x09...0x0D).contains(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
        }

        private func lowercase(_ byte: UInt8) -> UInt8 {
            byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
        }
    }
}
