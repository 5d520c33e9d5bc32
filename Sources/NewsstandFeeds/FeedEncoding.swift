#if canImport(Glibc)
import Glibc
#endif

/// Feeds not in UTF-8, made UTF-8 before anything reads them: UTF-16 (by its byte-order mark, or by the
/// zero bytes of `<?` in it); XML that declares ISO-8859-1, Latin-1, US-ASCII or Windows-1252 (read as
/// Windows-1252, its superset in practice, by our own table); any other declared encoding (EUC-KR,
/// Shift_JIS, GB2312/GBK, Big5, KOI8-R, Windows-125x, ISO-8859-x…) through glibc's iconv, invalid
/// sequences becoming U+FFFD. An encoding iconv does not know is refused, by name: reading it as UTF-8
/// would name a subscription "��".
enum FeedEncoding {
    /// A declared encoding this system cannot convert.
    struct Unsupported: Error {
        var name: String
    }

    /// The body in UTF-8 when it was in another encoding; nil when it is UTF-8 (or claims nothing else).
    /// - Throws: ``Unsupported`` for a declared encoding iconv does not know.
    static func utf8(_ bytes: UnsafeBufferPointer<UInt8>) throws -> [UInt8]? {
        guard bytes.count >= 2 else { return nil }
        // UTF-32 (its byte-order mark, or `<` as four bytes) before UTF-16, whose little-endian mark it starts with.
        if bytes.count >= 4 {
            let head = (bytes[0], bytes[1], bytes[2], bytes[3])
            if head == (0, 0, 0xFE, 0xFF) || head == (0, 0, 0, 0x3C) { return try utf32(bytes, bigEndian: true) }
            if head == (0xFF, 0xFE, 0, 0) || head == (0x3C, 0, 0, 0) { return try utf32(bytes, bigEndian: false) }
        }
        if bytes[0] == 0xFE && bytes[1] == 0xFF { return utf16(bytes, from: 2, bigEndian: true) }
        if bytes[0] == 0xFF && bytes[1] == 0xFE { return utf16(bytes, from: 2, bigEndian: false) }
        if bytes[0] == 0 && bytes[1] == UInt8(ascii: "<") { return utf16(bytes, from: 0, bigEndian: true) }
        if bytes[0] == UInt8(ascii: "<") && bytes[1] == 0 { return utf16(bytes, from: 0, bigEndian: false) }
        guard let declared = declaredEncoding(bytes) else { return nil }
        switch declared {
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "us-ascii", "ascii", "windows-1252", "cp1252":
            return windows1252(bytes)
        // UTF-16 or -32 declared on bytes that are neither (the checks above): the declaration is wrong, and
        // UTF-8 is what such feeds turn out to be.
        case "utf-8", "utf8", "utf-16", "utf16", "utf-16le", "utf-16be", "unicode", "utf-32", "utf32":
            return nil
        default:
            guard let converted = iconvUTF8(bytes, from: declared) else { throw Unsupported(name: declared) }
            return converted
        }
    }

    /// UTF-32 through iconv (a byte-order mark becomes U+FEFF, which the parser skips like UTF-8's).
    private static func utf32(_ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool) throws -> [UInt8] {
        let name = bigEndian ? "utf-32be" : "utf-32le"
        guard let converted = iconvUTF8(bytes, from: name) else { throw Unsupported(name: name) }
        return converted
    }

    /// The `encoding` of an `<?xml … ?>` declaration at the very start, lowercased.
    private static func declaredEncoding(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let head = Array(bytes.prefix(256))
        guard head.starts(with: Array("<?xml".utf8)), let end = find(Array("?>".utf8), in: head),
            let key = find(Array("encoding".utf8), in: Array(head[..<end]))
        else { return nil }
        var k = key + 8
        while k < end, head[k] == 0x20 || head[k] == UInt8(ascii: "=") || head[k] == 0x09 { k += 1 }
        guard k < end, head[k] == UInt8(ascii: "\"") || head[k] == UInt8(ascii: "'") else { return nil }
        let quote = head[k]
        k += 1
        let start = k
        while k < end, head[k] != quote { k += 1 }
        return String(decoding: head[start..<k], as: UTF8.self).lowercased()
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for k in 0...(haystack.count - needle.count) where haystack[k..<(k + needle.count)].elementsEqual(needle) {
            return k
        }
        return nil
    }

    private static func utf16(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, bigEndian: Bool) -> [UInt8] {
        var units: [UInt16] = []
        units.reserveCapacity((bytes.count - start) / 2)
        var k = start
        while k + 1 < bytes.count {
            let (high, low) = bigEndian ? (bytes[k], bytes[k + 1]) : (bytes[k + 1], bytes[k])
            units.append(UInt16(high) << 8 | UInt16(low))
            k += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    /// The code points Windows-1252 puts at 0x80–0x9F (ISO-8859-1's C1 controls there are never meant).
    private static let high: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
        0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
        0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]

    private static func windows1252(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        for byte in bytes {
            if byte < 0x80 {
                out.append(byte)
                continue
            }
            let value = (0x80...0x9F).contains(byte) ? high[Int(byte - 0x80)] : UInt32(byte)
            UTF8.encode(Unicode.Scalar(value) ?? "\u{FFFD}") { out.append($0) }
        }
        return out
    }

    /// Names passed to iconv: what IANA charset names are made of, and short. No `/`, so no `//TRANSLIT`
    /// or `//IGNORE` suffix reaches it.
    private static func isCharsetName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 40
            && name.utf8.allSatisfy { byte in
                FeedDate.isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: ":")
            }
    }

    /// `bytes` from `encoding` into UTF-8 through iconv(3); nil when iconv does not know the encoding. An
    /// invalid sequence becomes U+FFFD and the conversion goes on at the next byte; a truncated one at the
    /// end becomes U+FFFD. The output grows in steps, so memory stays about the size of the result.
    static func iconvUTF8(_ bytes: UnsafeBufferPointer<UInt8>, from encoding: String) -> [UInt8]? {
        #if canImport(Glibc)
            guard isCharsetName(encoding), let descriptor = iconv_open("UTF-8", encoding),
                Int(bitPattern: descriptor) != -1
            else { return nil }
            defer { iconv_close(descriptor) }
            guard let base = bytes.baseAddress else { return [] }
            let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 2)
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            // iconv's input is `char **` but never written through.
            var input: UnsafeMutablePointer<CChar>? = UnsafeMutablePointer(
                mutating: UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self))
            var inputLeft = bytes.count
            while inputLeft > 0 {
                let before = inputLeft
                var failure: Int32 = 0
                let produced = chunk.withUnsafeMutableBytes { raw -> Int in
                    var output = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
                    var outputLeft = raw.count
                    if iconv(descriptor, &input, &inputLeft, &output, &outputLeft) == -1 { failure = errno }
                    return raw.count - outputLeft
                }
                out.append(contentsOf: chunk[0..<produced])
                // E2BIG: the chunk is full; go on (without progress, step over a byte rather than loop).
                if failure == 0 || failure == E2BIG, produced > 0 || inputLeft < before { continue }
                out += replacement
                // EINVAL: a sequence cut by the end of the body. Else (EILSEQ) a byte that starts no character.
                if failure == EINVAL { break }
                input = input.map { $0 + 1 }
                inputLeft -= 1
            }
            return out
        #else
            return nil
        #endif
    }
}
