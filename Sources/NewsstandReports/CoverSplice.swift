import NewsstandCore

/// A stored issue record written out as its ``IssueReport``: the first asset whose `role` is `cover` moves
/// from `assets` to `coverSource`, byte for byte, so `list --json` keeps copying records rather than decoding
/// them (most subscribed podcast issues have a cover source). Reading it also checks the whole record's
/// syntax, as the plain copy's check does.
package struct CoverSplice {
    /// The asset objects' byte ranges, in order.
    private var elements: [Range<Int>] = []
    /// Which of ``elements`` is the cover's source.
    private var cover: Int?
    /// Just past the `assets` array's `]`.
    private var arrayEnd = 0
    /// Where the record's closing `}` is.
    private var closing = 0

    /// Reads `record`, which its writer starts with `{"assets":[`.
    /// - Throws: `JSONSyntaxError` for a damaged record, or a record in another order.
    package init(_ record: UnsafeBufferPointer<UInt8>) throws {
        var reader = JSONReader(bytes: record)
        try reader.expect(UInt8(ascii: "{"))
        guard try reader.nextKey(first: true) == "assets" else { throw reader.error("a record starts with its assets") }
        try reader.expect(UInt8(ascii: "["))
        if reader.peek() == UInt8(ascii: "]") {
            try reader.expect(UInt8(ascii: "]"))
        } else {
            while true {
                _ = reader.peek()
                let start = reader.i
                try reader.skipValue()
                elements.append(start..<reader.i)
                if reader.peek() == UInt8(ascii: "]") {
                    try reader.expect(UInt8(ascii: "]"))
                    break
                }
                try reader.expect(UInt8(ascii: ","))
            }
        }
        arrayEnd = reader.i
        while try reader.nextKey(first: false) != nil { try reader.skipValue() }
        closing = reader.i - 1
        cover = try elements.firstIndex { try Self.isCoverSource(UnsafeBufferPointer(rebasing: record[$0])) }
    }

    /// Whether the asset object's own `role` (not a `userInfo` entry's) is `cover`.
    private static func isCoverSource(_ asset: UnsafeBufferPointer<UInt8>) throws -> Bool {
        var reader = JSONReader(bytes: asset)
        try reader.expect(UInt8(ascii: "{"))
        var first = true
        while let key = try reader.nextKey(first: first) {
            first = false
            if key == "role" { return try reader.readValue() == .string("cover") }
            try reader.skipValue()
        }
        return false
    }

    /// Writes the record's members after its `{` (the report's prefix is already written), with the cover's
    /// source as `coverSource`.
    package func write(_ record: UnsafeBufferPointer<UInt8>, into writer: inout JSONWriter) {
        guard let cover else {
            writer.append(UnsafeBufferPointer(rebasing: record.dropFirst()))
            return
        }
        writer.raw("\"assets\":[")
        var first = true
        for (index, range) in elements.enumerated() where index != cover {
            if !first { writer.raw(",") }
            first = false
            writer.append(UnsafeBufferPointer(rebasing: record[range]))
        }
        writer.raw("]")
        // The members after the array, then the cover's source before the record's closing brace.
        writer.append(UnsafeBufferPointer(rebasing: record[arrayEnd..<closing]))
        writer.key("coverSource")
        writer.append(UnsafeBufferPointer(rebasing: record[elements[cover]]))
        writer.append(UnsafeBufferPointer(rebasing: record[closing...]))
    }
}
