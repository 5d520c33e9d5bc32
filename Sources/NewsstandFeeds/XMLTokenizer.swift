// Over 400 lines, one job: one tokenizer type; its scanning steps share private state and cursor.

/// A pull tokenizer for XML over bytes in memory: the feed readers' only XML parser.
///
/// Ours rather than Foundation's `XMLParser`: `XMLParser(data:)` fails on large documents on Linux, and a
/// byte scan of our own keeps safety in our hands (no entity is ever declared, fetched or expanded: a
/// DOCTYPE that declares one is refused), needs no libxml2 in embedders, fuzzes well and is fast (a
/// single pass, text decoded only when a reader asks for it).
///
/// What it reads: elements with attributes, namespaces (prefix → URI scopes, `xml` predefined),
/// character data, CDATA sections, comments, processing instructions, a DOCTYPE without entity
/// declarations, the five predefined entities and numeric character references. It checks what a
/// feed reader needs to trust: tags nest and match, the document does not end inside an element.
/// HTML's named entities (`&eacute;`, `&nbsp;`), which feeds use without a DTD, come from a fixed table
/// (``HTMLEntities``); any other unknown named entity is kept as written rather than refused.
package struct XMLTokenizer {
    struct Attribute {
        var prefix: String?
        var localName: String
        /// The namespace of a prefixed attribute; nil for an unprefixed one (XML Namespaces §6.3).
        var namespace: String?
        var value: String
    }

    package struct StartTag {
        var prefix: String?
        package var localName: String
        /// The element's namespace URI; nil when it has none or its prefix is not declared.
        var namespace: String?
        var attributes: [Attribute]

        /// The value of the attribute `localName` in `namespace` (nil: unprefixed).
        package func attribute(_ localName: String, namespace: String? = nil) -> String? {
            attributes.first { $0.localName == localName && $0.namespace == namespace }?.value
        }

        /// `prefix:localName`, as written.
        var qualifiedName: String { prefix.map { "\($0):\(localName)" } ?? localName }
    }

    /// Character data, not yet decoded: readers decode only what they keep (``string(_:)``).
    package struct Text {
        var range: Range<Int>
        var isCDATA: Bool
    }

    package enum Event {
        case start(StartTag)
        /// The end of the innermost open element (an empty-element tag gives a start and an end).
        case end
        case text(Text)
    }

    package struct SyntaxError: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        /// True for what is refused for safety (entity declarations), not for being malformed.
        var isUnsafe = false
        package var description: String { isUnsafe ? reason : "\(reason) at byte \(offset)" }
    }

    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"
    /// Deeper nesting is refused: no feed needs it, and it bounds the tokenizer's stacks.
    static let maxDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    /// The raw names of the open elements, to match end tags.
    private var open: [Range<Int>] = []
    /// Namespace bindings in scope, innermost last; `scopeCounts[n]` is how many the n-th open element added.
    private var bindings: [(prefix: String, uri: String)] = []
    private var scopeCounts: [Int] = []
    private var pendingEnd = false
    private var sawRoot = false

    package init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// How many elements are open (1 inside the root element).
    var depth: Int { open.count }

    /// The next event; nil once the root element has closed (anything after it is ignored).
    package mutating func next() throws -> Event? {
        if pendingEnd {
            pendingEnd = false
            closeElement()
            return .end
        }
        if sawRoot && open.isEmpty { return nil }
        while true {
            guard i < bytes.count else {
                if let innermost = open.last {
                    throw error("truncated inside <\(name(innermost))>")
                }
                throw error("no root element")
            }
            guard bytes[i] == UInt8(ascii: "<") else {
                let start = i
                while i < bytes.count, bytes[i] != UInt8(ascii: "<") { i += 1 }
                if open.isEmpty {
                    guard isWhitespace(start..<i) else {
                        throw SyntaxError(offset: start, reason: "text outside the root element")
                    }
                    continue
                }
                return .text(Text(range: start..<i, isCDATA: false))
            }
            guard i + 1 < bytes.count else { throw error("truncated inside a tag") }
            switch bytes[i + 1] {
            case UInt8(ascii: "/"):
                try endTag()
                return .end
            case UInt8(ascii: "?"):
                try skip(past: "?>", what: "a processing instruction")
            case UInt8(ascii: "!"):
                if hasPrefix("<!--") {
                    i += 4
                    try skip(past: "-->", what: "a comment")
                } else if hasPrefix("<![CDATA[") {
                    guard !open.isEmpty else { throw error("CDATA outside the root element") }
                    i += 9
                    let start = i
                    try skip(past: "]]>", what: "a CDATA section")
                    return .text(Text(range: start..<(i - 3), isCDATA: true))
                } else if hasPrefix("<!DOCTYPE", caseInsensitive: true) {
                    guard !sawRoot else { throw error("a DOCTYPE inside the document") }
                    i += 9
                    try doctype()
                } else {
                    throw error("unexpected markup \"<!\"")
                }
            default:
                return .start(try startTag())
            }
        }
    }

    /// Steps over the rest of the current element (after its start tag) to its end, inclusive.
    mutating func skipElement() throws {
        var level = 1
        while level > 0, let event = try next() {
            switch event {
            case .start: level += 1
            case .end: level -= 1
            case .text: break
            }
        }
    }

    // MARK: - Text

    /// The decoded text of `text`: references replaced (CDATA is literal).
    func string(_ text: Text) -> String {
        text.isCDATA ? string(text.range) : decode(text.range, isAttribute: false)
    }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Replaces the predefined entities, HTML's named ones and character references; in attribute values, also turns tabs
    /// and line breaks into spaces (XML 1.0 §3.3.3). Lenient where feeds are: an unknown or unterminated
    /// reference stays as written, an invalid code point becomes U+FFFD.
    private func decode(_ range: Range<Int>, isAttribute: Bool) -> String {
        var needsWork = false
        for k in range {
            let byte = bytes[k]
            if byte == UInt8(ascii: "&") || (isAttribute && (byte == 0x09 || byte == 0x0A || byte == 0x0D)) {
                needsWork = true
                break
            }
        }
        guard needsWork else { return string(range) }
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var k = range.lowerBound
        while k < range.upperBound {
            let byte = bytes[k]
            if isAttribute && (byte == 0x09 || byte == 0x0A || byte == 0x0D) {
                out.append(0x20)
                k += 1
                continue
            }
            guard byte == UInt8(ascii: "&") else {
                out.append(byte)
                k += 1
                continue
            }
            // The longest reference we decode is `&#x10FFFF;` (10 bytes), with leading zeros a few more.
            var end = k + 1
            while end < range.upperBound, end - k < 16, bytes[end] != UInt8(ascii: ";"),
                bytes[end] != UInt8(ascii: "&")
            {
                end += 1
            }
            guard end < range.upperBound, bytes[end] == UInt8(ascii: ";"),
                let scalar = reference(UnsafeBufferPointer(rebasing: bytes[(k + 1)..<end]))
            else {
                out.append(byte)
                k += 1
                continue
            }
            UTF8.encode(scalar) { out.append($0) }
            k = end + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The character a reference's name (between `&` and `;`) stands for; nil when we do not know it.
    private func reference(_ name: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar? {
        guard let first = name.first else { return nil }
        if first == UInt8(ascii: "#") {
            var value: UInt32 = 0
            var digits = 0
            let hex = name.count > 1 && (name[1] | 0x20) == UInt8(ascii: "x")
            for byte in name.dropFirst(hex ? 2 : 1) {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
                // Past U+10FFFF nothing is valid; stop before the arithmetic could overflow.
                value = min(value * (hex ? 16 : 10) + digit, 0x11_0000)
                digits += 1
            }
            guard digits > 0 else { return nil }
            // NUL, surrogates and values past U+10FFFF name no XML character.
            guard value != 0, let scalar = Unicode.Scalar(value) else { return "\u{FFFD}" }
            return scalar
        }
        switch String(decoding: name, as: UTF8.self) {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        // HTML's names, from a fixed table (never a DTD): what feeds write without declaring.
        default: return HTMLEntities.scalar(String(decoding: name, as: UTF8.self))
        }
    }

    // MARK: - Markup

    private mutating func startTag() throws -> StartTag {
        let tagStart = i
        i += 1
        let nameRange = try scanName(what: "element")
        guard open.count < XMLTokenizer.maxDepth else { throw error("elements nested too deep") }
        var raw: [(name: Range<Int>, value: Range<Int>)] = []
        var isEmpty = false
        while true {
            let hadSpace = skipWhitespace()
            guard i < bytes.count else { throw error("truncated inside a tag") }
            if bytes[i] == UInt8(ascii: ">") {
                i += 1
                break
            }
            if bytes[i] == UInt8(ascii: "/") {
                guard i + 1 < bytes.count else { throw error("truncated inside a tag") }
                guard bytes[i + 1] == UInt8(ascii: ">") else { throw error("expected \"/>\"") }
                i += 2
                isEmpty = true
                break
            }
            guard hadSpace else { throw error("expected a space before an attribute") }
            let attributeName = try scanName(what: "attribute")
            skipWhitespace()
            guard i < bytes.count else { throw error("truncated inside a tag") }
            guard bytes[i] == UInt8(ascii: "=") else { throw error("attribute \(string(attributeName)) has no value") }
            i += 1
            skipWhitespace()
            guard i < bytes.count else { throw error("truncated inside a tag") }
            let quote = bytes[i]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw error("attribute \(string(attributeName)) is not quoted")
            }
            i += 1
            let valueStart = i
            while i < bytes.count, bytes[i] != quote { i += 1 }
            guard i < bytes.count else { throw error("truncated inside a tag") }
            raw.append((attributeName, valueStart..<i))
            i += 1
        }
        guard !sawRoot || !open.isEmpty else {
            throw SyntaxError(offset: tagStart, reason: "a second root element")
        }
        sawRoot = true

        // Namespace declarations first: they apply to the element's own name and attributes.
        var added = 0
        var attributes: [Attribute] = []
        attributes.reserveCapacity(raw.count)
        var pending: [(prefix: String?, local: String, value: String)] = []
        for (nameRange, valueRange) in raw {
            let (prefix, local) = split(nameRange)
            let value = decode(valueRange, isAttribute: true)
            if prefix == nil && local == "xmlns" {
                bindings.append(("", value))
                added += 1
            } else if prefix == "xmlns" {
                bindings.append((local, value))
                added += 1
            } else {
                pending.append((prefix, local, value))
            }
        }
        open.append(nameRange)
        scopeCounts.append(added)
        for (prefix, local, value) in pending {
            attributes.append(
                Attribute(
                    prefix: prefix, localName: local, namespace: prefix.flatMap { namespace(of: $0) }, value: value))
        }
        let (prefix, local) = split(nameRange)
        let tag = StartTag(
            prefix: prefix, localName: local, namespace: namespace(of: prefix ?? ""), attributes: attributes)
        pendingEnd = isEmpty
        return tag
    }

    private mutating func endTag() throws {
        let tagStart = i
        i += 2
        let nameRange = try scanName(what: "end tag", mayEndDocument: open.count == 1)
        skipWhitespace()
        // The root's end tag without its `>` at the end of the document (`</rss`, perhaps followed by a
        // comment): nothing is missing but that byte, so it is read as closed, as other readers do.
        if i == bytes.count || bytes[i] == UInt8(ascii: "<"), open.count == 1, let root = open.last,
            bytes[root].elementsEqual(bytes[nameRange])
        {
            closeElement()
            return
        }
        guard i < bytes.count else { throw error("truncated inside a tag") }
        guard bytes[i] == UInt8(ascii: ">") else { throw error("expected \">\" after </\(string(nameRange))") }
        i += 1
        guard let innermost = open.last else {
            throw SyntaxError(offset: tagStart, reason: "end tag </\(string(nameRange))> without a start tag")
        }
        guard bytes[innermost].elementsEqual(bytes[nameRange]) else {
            throw SyntaxError(
                offset: tagStart, reason: "end tag </\(string(nameRange))> does not match <\(string(innermost))>")
        }
        closeElement()
    }

    private mutating func closeElement() {
        open.removeLast()
        bindings.removeLast(scopeCounts.removeLast())
    }

    /// Steps over a DOCTYPE (after `<!DOCTYPE`): its external identifier is never fetched, and an internal
    /// subset that declares an entity is refused, which rules out entity bombs and external entities alike.
    private mutating func doctype() throws {
        var inSubset = false
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                i += 1
                while i < bytes.count, bytes[i] != byte { i += 1 }
            case UInt8(ascii: "<") where inSubset:
                if hasPrefix("<!--") {
                    i += 4
                    try skip(past: "-->", what: "a comment")
                    continue
                }
                if hasPrefix("<!ENTITY", caseInsensitive: true) {
                    throw SyntaxError(offset: i, reason: "declares entities; refused", isUnsafe: true)
                }
            case UInt8(ascii: "["):
                inSubset = true
            case UInt8(ascii: "]"):
                inSubset = false
            case UInt8(ascii: ">") where !inSubset:
                i += 1
                return
            default:
                break
            }
            i += 1
        }
        throw error("truncated inside the DOCTYPE")
    }

    // MARK: - Scanning

    /// A name: up to whitespace or a delimiter. Its first byte may not be a digit, `-`, `.` or a delimiter.
    /// It may run to the end of the bytes only when `mayEndDocument` (the root's end tag).
    private mutating func scanName(what: String, mayEndDocument: Bool = false) throws -> Range<Int> {
        let start = i
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "/"), UInt8(ascii: ">"), UInt8(ascii: "="),
                UInt8(ascii: "<"), UInt8(ascii: "\""), UInt8(ascii: "'"):
                break
            default:
                i += 1
                continue
            }
            break
        }
        guard i < bytes.count || mayEndDocument else { throw error("truncated inside a tag") }
        guard start < i else { throw error("expected an \(what) name") }
        switch bytes[start] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "&"):
            throw SyntaxError(offset: start, reason: "invalid \(what) name \(string(start..<i))")
        default:
            return start..<i
        }
    }

    /// Splits a raw qualified name at its first colon; a name that starts or ends with one has no prefix.
    private func split(_ range: Range<Int>) -> (prefix: String?, local: String) {
        var k = range.lowerBound + 1
        while k < range.upperBound - 1 {
            if bytes[k] == UInt8(ascii: ":") {
                return (string(range.lowerBound..<k), string((k + 1)..<range.upperBound))
            }
            k += 1
        }
        return (nil, string(range))
    }

    private func namespace(of prefix: String) -> String? {
        if prefix == "xml" { return XMLTokenizer.xmlNamespace }
        for binding in bindings.reversed() where binding.prefix == prefix {
            // `xmlns=""` undeclares the default namespace.
            return binding.uri.isEmpty ? nil : binding.uri
        }
        return nil
    }

    private mutating func skip(past terminator: StaticString, what: String) throws {
        let count = terminator.utf8CodeUnitCount
        let first = terminator.utf8Start[0]
        while i + count <= bytes.count {
            if bytes[i] == first {
                var matches = true
                for k in 1..<count where bytes[i + k] != terminator.utf8Start[k] {
                    matches = false
                    break
                }
                if matches {
                    i += count
                    return
                }
            }
            i += 1
        }
        i = bytes.count
        throw error("truncated inside \(what)")
    }

    private func hasPrefix(_ text: StaticString, caseInsensitive: Bool = false) -> Bool {
        let count = text.utf8CodeUnitCount
        guard i + count <= bytes.count else { return false }
        for k in 0..<count {
            let byte = bytes[i + k]
            let expected = text.utf8Start[k]
            if byte == expected { continue }
            if caseInsensitive, byte | 0x20 == expected | 0x20, (expected | 0x20) >= UInt8(ascii: "a"),
                (expected | 0x20) <= UInt8(ascii: "z")
            {
                continue
            }
            return false
        }
        return true
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = i
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D {
            i += 1
        }
        return i > start
    }

    private func isWhitespace(_ range: Range<Int>) -> Bool {
        bytes[range].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    private func name(_ range: Range<Int>) -> String { string(range) }

    private func error(_ reason: String) -> SyntaxError { SyntaxError(offset: i, reason: reason) }
}
