import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// A position in one line, reading the catalog's own members in their order.
/// Throws ``IssueListingBuilder/Unexpected`` at anything else.
struct IssueLineCursor {
    let line: UnsafeBufferPointer<UInt8>
    var at = 0

    init(_ line: UnsafeBufferPointer<UInt8>) { self.line = line }

    /// A lowercase hex digit's value, or 0x10 for any other byte.
    private static let hex: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        default: 0x10
        }
    }

    var atEnd: Bool { at == line.count }

    /// Steps over `text` when the line continues with it.
    mutating func skip(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard line.count - at >= count, let base = line.baseAddress, memcmp(base + at, text.utf8Start, count) == 0
        else {
            return false
        }
        at += count
        return true
    }

    mutating func expect(_ text: StaticString) throws {
        guard skip(text) else { throw IssueListingBuilder.Unexpected() }
    }

    /// An index line's end: the record member (what follows is the record), or a removal's closing brace.
    mutating func expectEnd(_ record: StaticString, orRemoval: Bool) throws {
        if skip(record) { return }
        guard orRemoval, at == line.count - 1, line[at] == UInt8(ascii: "}") else {
            throw IssueListingBuilder.Unexpected()
        }
    }

    /// 32 lowercase hex digits.
    mutating func key() throws -> (UInt64, UInt64) {
        guard line.count - at >= 32 else { throw IssueListingBuilder.Unexpected() }
        var halves: (UInt64, UInt64) = (0, 0)
        var invalid: UInt8 = 0
        Self.hex.withUnsafeBufferPointer { hex in
            for index in 0..<16 {
                let digit = hex[Int(line[at + index])]
                invalid |= digit
                halves.0 = halves.0 << 4 | UInt64(digit & 0xF)
            }
            for index in 16..<32 {
                let digit = hex[Int(line[at + index])]
                invalid |= digit
                halves.1 = halves.1 << 4 | UInt64(digit & 0xF)
            }
        }
        guard invalid & 0x10 == 0 else { throw IssueListingBuilder.Unexpected() }
        at += 32
        return halves
    }

    /// A JSON string's UTF-8, appended to `out`: copied when it has no escape, else decoded.
    mutating func string(into out: inout [UInt8]) throws {
        guard at < line.count, line[at] == UInt8(ascii: "\"") else { throw IssueListingBuilder.Unexpected() }
        var end = at + 1
        while end < line.count, line[end] != UInt8(ascii: "\""), line[end] != UInt8(ascii: "\\") { end += 1 }
        guard end < line.count else { throw IssueListingBuilder.Unexpected() }
        if line[end] == UInt8(ascii: "\"") {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: line[(at + 1)..<end]))
            at = end + 1
            return
        }
        var reader = JSONReader(bytes: line, offset: at)
        guard let text = try? reader.string() else { throw IssueListingBuilder.Unexpected() }
        out.append(contentsOf: text.utf8)
        at = reader.i
    }

    /// `YYYY-MM-DD` as year × 10,000 + month × 100 + day, checked as a date.
    mutating func date() throws -> Int32 {
        guard line.count - at >= 10, line[at + 4] == UInt8(ascii: "-"), line[at + 7] == UInt8(ascii: "-") else {
            throw IssueListingBuilder.Unexpected()
        }
        func number(_ range: Range<Int>) throws -> Int {
            var value = 0
            for index in range {
                let byte = line[at + index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                    throw IssueListingBuilder.Unexpected()
                }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let year = try number(0..<4)
        let month = try number(5..<7)
        let day = try number(8..<10)
        guard IssueDate(year: year, month: month, day: day) != nil else { throw IssueListingBuilder.Unexpected() }
        at += 10
        return Int32(year * 10_000 + month * 100 + day)
    }

    mutating func status() throws -> Issue.Status {
        var end = at
        while end < line.count, line[end] != UInt8(ascii: "\"") { end += 1 }
        let word = String(decoding: UnsafeBufferPointer(rebasing: line[at..<end]), as: UTF8.self)
        guard let status = Issue.Status(rawValue: word) else { throw IssueListingBuilder.Unexpected() }
        at = end
        return status
    }

    /// A non-negative decimal integer.
    mutating func integer() throws -> Int64 {
        let start = at
        var value: Int64 = 0
        while at < line.count, line[at] >= UInt8(ascii: "0"), line[at] <= UInt8(ascii: "9") {
            guard at - start < 18 else { throw IssueListingBuilder.Unexpected() }
            value = value * 10 + Int64(line[at] - UInt8(ascii: "0"))
            at += 1
        }
        guard at > start else { throw IssueListingBuilder.Unexpected() }
        return value
    }
}
