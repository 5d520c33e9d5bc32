import Newsstand

/// The `list` table, built for 100,000 rows: a first pass measures the columns, a second writes each
/// row straight into a buffer flushed in large chunks, so no table of strings is ever held.
enum IssueTable {
    static let header = ["NAME", "DATE", "STATUS", "PIN", "ASSETS", "SIZE", "FOLDER"]
    static let nameWidth = 48

    static func write(_ summaries: [IssueSummary], root: String) {
        var widths = header.map(width)
        // Names are measured once; the other columns are ASCII.
        var nameWidths: [Int] = []
        nameWidths.reserveCapacity(summaries.count)
        for summary in summaries {
            let name = min(width(summary.name), nameWidth)
            nameWidths.append(name)
            widths[0] = max(widths[0], name)
            widths[1] = max(widths[1], 10)
            widths[2] = max(widths[2], summary.status.rawValue.utf8.count)
            widths[4] = max(widths[4], digits(summary.assetsDone) + 1 + digits(summary.assetsTotal))
            widths[5] = max(widths[5], size(summary.bytes).utf8.count)
        }
        var out: [UInt8] = []
        out.reserveCapacity(1 << 20)
        func cell(_ text: String, width cellWidth: Int, _ column: Int) {
            out.append(contentsOf: text.utf8)
            out.append(contentsOf: repeatElement(0x20, count: max(0, widths[column] - cellWidth) + 2))
        }
        for (column, title) in header.enumerated() {
            if column < header.count - 1 { cell(title, width: title.utf8.count, column) } else { out += title.utf8 }
        }
        out.append(0x0A)
        let rootBytes = Array((root + "/").utf8)
        for (index, summary) in summaries.enumerated() {
            let name = nameWidths[index] < width(summary.name) ? clip(summary.name) : summary.name
            cell(name, width: nameWidths[index], 0)
            cell(summary.date.description, width: 10, 1)
            cell(summary.status.rawValue, width: summary.status.rawValue.utf8.count, 2)
            cell(summary.isPinned ? "yes" : "-", width: summary.isPinned ? 3 : 1, 3)
            let assets = "\(summary.assetsDone)/\(summary.assetsTotal)"
            cell(assets, width: assets.utf8.count, 4)
            let bytes = size(summary.bytes)
            cell(bytes, width: bytes.utf8.count, 5)
            out += rootBytes
            out += summary.folderName.utf8
            out.append(0x0A)
            if out.count > 1 << 20 {
                Terminal.write(String(decoding: out, as: UTF8.self), to: 1)
                out.removeAll(keepingCapacity: true)
            }
        }
        Terminal.write(String(decoding: out, as: UTF8.self), to: 1)
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
    static func width(_ text: String) -> Int {
        text.utf8.allSatisfy { $0 < 0x80 } ? text.utf8.count : DisplayWidth.of(text)
    }

    static func clip(_ text: String) -> String {
        width(text) <= nameWidth ? text : DisplayWidth.clip(text, to: nameWidth)
    }

    static func size(_ value: Int64) -> String { ByteFormat.binary(value) }
}
