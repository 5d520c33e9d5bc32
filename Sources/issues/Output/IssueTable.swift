import Newsstand

/// The `list` table, built for a million rows: a first pass measures the columns (over the rows as stored,
/// which reads memory in order), a second writes each row's bytes straight into a buffer flushed in large
/// chunks, so no string is made per row (names and folders are copied from the listing's own buffer).
struct IssueTable {
    static let header = ["NAME", "DATE", "STATUS", "PIN", "ASSETS", "SIZE", "FOLDER"]
    static let nameWidth = 48

    private var widths = IssueTable.header.map { $0.utf8.count }
    private var out: [UInt8] = []

    static func write(_ listing: IssueListing, root: String) {
        var table = IssueTable()
        listing.forEachRow(sorted: false) { row, name, _ in table.measure(row, name: name) }
        table.out.reserveCapacity(1 << 20 + 4096)
        for (column, title) in header.enumerated() {
            if column < header.count - 1 { table.cell(title, column) } else { table.out += title.utf8 }
        }
        table.out.append(0x0A)
        let rootBytes = Array((root + "/").utf8)
        listing.forEachRow { row, name, folder in table.write(row, name: name, folder: folder, root: rootBytes) }
        table.flush()
    }

    private mutating func measure(_ row: IssueListing.Row, name: UnsafeBufferPointer<UInt8>) {
        widths[0] = max(widths[0], min(Self.width(name), Self.nameWidth))
        widths[1] = max(widths[1], 10)
        widths[2] = max(widths[2], row.status.rawValue.utf8.count)
        widths[4] = max(widths[4], Self.digits(row.assetsDone) + 1 + Self.digits(row.assetsTotal))
        let start = out.count
        ByteFormat.binary(row.bytes, into: &out)
        widths[5] = max(widths[5], out.count - start)
        out.removeSubrange(start...)
    }

    private mutating func write(
        _ row: IssueListing.Row, name: UnsafeBufferPointer<UInt8>, folder: UnsafeBufferPointer<UInt8>, root: [UInt8]
    ) {
        let width = Self.width(name)
        if width > Self.nameWidth {
            let clipped = Self.clip(String(decoding: name, as: UTF8.self))
            out.append(contentsOf: clipped.utf8)
            pad(Self.nameWidth, 0)
        } else {
            out.append(contentsOf: name)
            pad(width, 0)
        }
        Self.date(row.date, into: &out)
        pad(10, 1)
        cell(row.status.rawValue, 2)
        cell(row.isPinned ? "yes" : "-", 3)
        var start = out.count
        ByteFormat.decimal(row.assetsDone, into: &out)
        out.append(UInt8(ascii: "/"))
        ByteFormat.decimal(row.assetsTotal, into: &out)
        pad(out.count - start, 4)
        start = out.count
        ByteFormat.binary(row.bytes, into: &out)
        pad(out.count - start, 5)
        out += root
        out.append(contentsOf: folder)
        out.append(0x0A)
        if out.count > 1 << 20 { flush() }
    }

    /// Spaces after a cell `cellWidth` columns wide, to its column's width and two more.
    private mutating func pad(_ cellWidth: Int, _ column: Int) {
        out.append(contentsOf: repeatElement(0x20, count: max(0, widths[column] - cellWidth) + 2))
    }

    private mutating func cell(_ text: String, _ column: Int) {
        out.append(contentsOf: text.utf8)
        pad(text.utf8.count, column)
    }

    private mutating func flush() {
        Terminal.write(String(decoding: out, as: UTF8.self), to: 1)
        out.removeAll(keepingCapacity: true)
    }

    /// `YYYY-MM-DD`.
    private static func date(_ date: IssueDate, into out: inout [UInt8]) {
        func two(_ value: Int, _ out: inout [UInt8]) {
            out.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
            out.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        two(date.year / 100, &out)
        two(date.year, &out)
        out.append(UInt8(ascii: "-"))
        two(date.month, &out)
        out.append(UInt8(ascii: "-"))
        two(date.day, &out)
    }

    static func digits(_ value: Int) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        return count
    }

    /// Columns a cell takes on a terminal: its byte count for ASCII (the common, fast case).
    static func width(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        utf8.allSatisfy { $0 < 0x80 } ? utf8.count : DisplayWidth.of(String(decoding: utf8, as: UTF8.self))
    }

    static func clip(_ text: String) -> String {
        DisplayWidth.of(text) <= nameWidth ? text : DisplayWidth.clip(text, to: nameWidth)
    }
}
