import Newsstand

/// The `list` table, built for 100,000 rows: a first pass measures the columns, a second writes each
/// row straight into a buffer flushed in large chunks, so no table of strings is ever held.
enum IssueTable {
    static let header = ["NAME", "DATE", "STATUS", "ASSETS", "SIZE", "FOLDER"]
    static let nameWidth = 48

    static func write(_ summaries: [IssueSummary], root: String) {
        var widths = header.map(width)
        for summary in summaries {
            widths[0] = max(widths[0], min(width(summary.name), nameWidth))
            widths[1] = max(widths[1], 10)
            widths[2] = max(widths[2], summary.status.rawValue.utf8.count)
            widths[3] = max(widths[3], digits(summary.assetsDone) + 1 + digits(summary.assetsTotal))
            widths[4] = max(widths[4], size(summary.bytes).utf8.count)
        }
        var out = ""
        out.reserveCapacity(1 << 20)
        func cell(_ text: String, _ column: Int) {
            out += text
            let pad = widths[column] - width(text) + 2
            if pad > 0 { out += String(repeating: " ", count: pad) }
        }
        for (column, title) in header.enumerated() {
            if column < header.count - 1 { cell(title, column) } else { out += title }
        }
        out += "\n"
        for summary in summaries {
            cell(clip(summary.name), 0)
            cell(summary.date.description, 1)
            cell(summary.status.rawValue, 2)
            cell("\(summary.assetsDone)/\(summary.assetsTotal)", 3)
            cell(size(summary.bytes), 4)
            out += root
            out += "/"
            out += summary.folderName
            out += "\n"
            if out.utf8.count > 1 << 20 {
                Terminal.write(out, to: 1)
                out.removeAll(keepingCapacity: true)
            }
        }
        Terminal.write(out, to: 1)
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

    /// Binary units with one decimal below 100 (`12.3 MiB`, `512 B`), as `Format.bytes` prints them.
    static func size(_ value: Int64) -> String {
        guard value >= 1024 else { return "\(max(value, 0)) B" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var unit = 0
        var scaled = Double(value) / 1024
        while scaled >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        if scaled >= 100 { return "\(Int(scaled.rounded())) \(units[unit])" }
        let tenths = Int((scaled * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
