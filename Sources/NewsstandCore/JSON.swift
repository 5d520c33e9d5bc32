/// A small, fast JSON reader for the catalog (its writer is `JSONWriter.swift`).
///
/// On the 100,000-issue index, `JSONSerialization` took 1.18 s and `JSONDecoder` 0.81 s where a whole
/// `issues list` with this reader takes about 0.25 s (README, design notes). Only what the catalog
/// needs: RFC 8259 values, integers kept exact, duplicate keys refused.
package enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

package struct JSONSyntaxError: Error, CustomStringConvertible {
    package var offset: Int
    package var reason: String
    package var description: String { "\(reason) at byte \(offset)" }
}

package struct JSONReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    package private(set) var i = 0

    /// Parses one JSON document (surrounding whitespace allowed, nothing else).
    package static func parse(_ data: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var reader = JSONReader(bytes: data)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.i == data.count else { throw reader.error("unexpected data after the document") }
        return value
    }

    /// Parses one JSON object and returns its members, with the value of the member named `skipped` stepped
    /// over (its syntax checked, no value built): a subscription record read without its hundreds of items.
    /// A repeated key is refused, as by ``parse(_:)``.
    package static func parseObject(_ data: UnsafeBufferPointer<UInt8>, skipping skipped: String?) throws -> [String: JSONValue] {
        var reader = JSONReader(bytes: data)
        try reader.expect(UInt8(ascii: "{"))
        var object: [String: JSONValue] = [:]
        var skippedOnce = false
        var first = true
        while let key = try reader.nextKey(first: first) {
            first = false
            let repeated: Bool
            if key == skipped {
                repeated = skippedOnce
                skippedOnce = true
                try reader.skipValue()
            } else {
                repeated = object.updateValue(try reader.readValue(), forKey: key) != nil
            }
            guard !repeated else { throw reader.error("duplicate key \(key.debugDescription)") }
        }
        guard reader.peek() == nil else { throw reader.error("unexpected data after the document") }
        return object
    }

    /// A reader positioned at `offset`, for pulling values one at a time (``readValue()``,
    /// ``nextKey()``, ``skipValue()``) out of a larger document: the catalog index and import files.
    package init(bytes: UnsafeBufferPointer<UInt8>, offset: Int = 0) {
        self.bytes = bytes
        self.i = offset
    }

    package func error(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: i, reason: reason) }

    var isAtEnd: Bool { i >= bytes.count }

    /// The next byte after whitespace, without consuming it.
    package mutating func peek() -> UInt8? {
        skipWhitespace()
        return i < bytes.count ? bytes[i] : nil
    }

    /// Consumes `byte` (after whitespace) or throws.
    package mutating func expect(_ byte: UInt8) throws {
        guard peek() == byte else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
        i += 1
    }

    /// Reads one whole value.
    package mutating func readValue() throws -> JSONValue {
        skipWhitespace()
        return try value(depth: 0)
    }

    /// Inside an object whose `{` was consumed: the next key (consuming the `:` after it), or nil at
    /// the closing `}` (consumed). Call after each value; it handles the `,` between members.
    package mutating func nextKey(first: Bool) throws -> String? {
        skipWhitespace()
        guard i < bytes.count else { throw error("unexpected end of data") }
        if bytes[i] == UInt8(ascii: "}") {
            i += 1
            return nil
        }
        if !first {
            guard bytes[i] == UInt8(ascii: ",") else { throw error("expected ',' or '}'") }
            i += 1
            skipWhitespace()
        }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a key") }
        let key = try string()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        return key
    }

    /// Checks one value's syntax and steps over it without building it: what `list --json` does for
    /// each stored issue before copying its bytes out.
    package mutating func skipValue(depth: Int = 0) throws {
        skipWhitespace()
        guard depth < 512 else { throw error("nesting too deep") }
        guard i < bytes.count else { throw error("unexpected end of data") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var first = true
            while try nextKey(first: first) != nil {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            i += 1
            if peek() == UInt8(ascii: "]") {
                i += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                guard let next = peek() else { throw error("unexpected end of data") }
                i += 1
                if next == UInt8(ascii: "]") { return }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or ']'") }
            }
        case UInt8(ascii: "\""):
            i += 1
            while i < bytes.count {
                let byte = bytes[i]
                if byte == UInt8(ascii: "\"") {
                    i += 1
                    return
                }
                if byte < 0x20 { throw error("control character in string") }
                i += byte == UInt8(ascii: "\\") ? 2 : 1
            }
            throw error("unterminated string")
        default:
            _ = try value(depth: depth)
        }
    }

    private mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard depth < 512 else { throw error("nesting too deep") }
        guard i < bytes.count else { throw error("unexpected end of data") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { throw error("unexpected end of data") }
        for k in 0..<count where bytes[i + k] != word.utf8Start[k] { throw error("invalid literal") }
        i += count
    }

    private mutating func object(depth: Int) throws -> JSONValue {
        i += 1
        var result: [String: JSONValue] = [:]
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object(result)
        }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let keyOffset = i
            let key = try string()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':'") }
            i += 1
            skipWhitespace()
            // A repeated key is ambiguous (which one wins differs between readers): refuse it.
            guard result.updateValue(try value(depth: depth + 1), forKey: key) == nil else {
                throw JSONSyntaxError(offset: keyOffset, reason: "duplicate key \(key.debugDescription)")
            }
            skipWhitespace()
            guard i < bytes.count else { throw error("unexpected end of data") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
            } else if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(result)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws -> JSONValue {
        i += 1
        var result: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(result)
        }
        while true {
            skipWhitespace()
            result.append(try value(depth: depth + 1))
            skipWhitespace()
            guard i < bytes.count else { throw error("unexpected end of data") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
            } else if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(result)
            } else {
                throw error("expected ',' or ']'")
            }
        }
    }

    package mutating func string() throws -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                i += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            i += 1
        }
        var out = Array(bytes[start..<i])
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "\""):
                i += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                i += 1
                guard i < bytes.count else { throw error("unexpected end of data") }
                let escape = bytes[i]
                i += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                        else {
                            throw error("unpaired surrogate")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in string") }
                out.append(byte)
                i += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw error("unexpected end of data") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[i]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
            i += 1
        }
        return value
    }

    private mutating func number() throws -> JSONValue {
        let start = i
        var integral = true
        while i < bytes.count, JSONReader.isNumberByte(bytes[i]) {
            let byte = bytes[i]
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { integral = false }
            i += 1
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if integral, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "invalid number")
        }
        return .double(value)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
            UInt8(ascii: "+"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
