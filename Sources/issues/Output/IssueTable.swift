import Newsstand

/// The `list` table, built for a million rows: a first pass measures the columns, a second writes each row's
/// bytes straight into a buffer flushed in large chunks, so no string is made per row (names and folders are
/// copied from the listing's own buffer).
enum IssueTable {
    static let header = ["NAME", "DATE", "STATUS", "PIN", "ASSETS", "SIZE", "FOLDER"]
    static let nameWidth = 48

    static func write(_ listing: IssueListing, root: String) {
        var widths = header.map { $0.utf8.count }
        // Names are measured once (clipped names are at most 48 columns); the other columns are ASCII.
        var nameWidths: [UInt8] = []
        nameWidths.reserveCapacity(listing.count)
        var scratch: [UInt8] = []
        listing.forEachRow { row, nameBytes, _ in
            let name = UInt8(min(width(nameBytes), nameWidth))
            nameWidths.append(name)
            widths[0] = max(widths[0], Int(name))
            widths[1] = max(widths[1], 10)
            widths[2] = max(widths[2], row.status.rawValue.utf8.count)
            widths[4] = max(widths[4], digits(row.assetsDone) + 1 + digits(row.assetsTotal))
            scratch.removeAll(keepingCapacity: true)
            ByteFormat.binary(row.bytes, into: &scratch)
            widths[5] = max(widths[5], scratch.count)
        }
        var out: [UInt8] = []
        out.reserveCapacity(1 << 20 + 4096)
        func pad(width cellWidth: Int, _ column: Int) {
            out.append(contentsOf: repeatElement(0x20, count: max(0, widths[column] - cellWidth) + 2))
        }
        func cell(_ text: String, _ column: Int) {
            out.append(contentsOf: text.utf8)
            pad(width: text.utf8.count, column)
        }
        for (column, title) in header.enumerated() {
            if column < header.count - 1 { cell(title, column) } else { out += title.utf8 }
        }
        out.append(0x0A)
        let rootBytes = Array((root + "/").utf8)
        var position = 0
        listing.forEachRow { row, name, folder in
            let measured = Int(nameWidths[position])
            position += 1
            if measured < width(name) {
                out.append(contentsOf: clip(String(decoding: name, as: UTF8.self)).utf8)
            } else {
                out.append(contentsOf: name)
            }
            pad(width: measured, 0)
            date(row.date, into: &out)
            pad(width: 10, 1)
            cell(row.status.rawValue, 2)
            cell(row.isPinned ? "yes" : "-", 3)
            let assetsStart = out.count
            ByteFormat.decimal(row.assetsDone, into: &out)
            out.append(UInt8(ascii: "/"))
            ByteFormat.decimal(row.assetsTotal, into: &out)
            pad(width: out.count - assetsStart, 4)
            let sizeStart = out.count
            ByteFormat.binary(row.bytes, into: &out)
            pad(width: out.count - sizeStart, 5)
            out += rootBytes
            out.append(contentsOf: folder)
            out.append(0x0A)
            if out.count > 1 << 20 {
                Terminal.write(String(decoding: out, as: UTF8.self), to: 1)
                out.removeAll(keepingCapacity: true)
            }
        }
        Terminal.write(String(decoding: out, as: UTF8.self), to: 1)
    }

    /// `YYYY-MM-DD`.
    private static func date(_ date: IssueDate, into out: inout [UInt8]) {
        func two(_ value: Int) {
            out.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
            out.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        two(date.year / 100)
        two(date.year)
        out.append(UInt8(ascii: "-"))
        two(date.month)
        out.append(UInt8(ascii: "-"))
        two(date.day)
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
