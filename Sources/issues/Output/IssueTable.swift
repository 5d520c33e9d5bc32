import Newsstand

/// The `list` table, built for 100,000 rows: widths from byte counts where the text is ASCII, sizes
/// formatted with integer arithmetic, and the text written out in large chunks as it is built.
enum IssueTable {
    static let header = ["NAME", "DATE", "STATUS", "ASSETS", "SIZE", "FOLDER"]
    static let nameWidth = 48

    static func write(_ summaries: [IssueSummary], root: String) {
        var rows: [[String]] = []
        rows.reserveCapacity(summaries.count)
        var widths = header.map(width)
        for summary in summaries {
            let row = [
                clip(summary.name), summary.date.description, summary.status.rawValue,
                "\(summary.assetsDone)/\(summary.assetsTotal)", size(summary.bytes), root + "/" + summary.folderName,
            ]
            for column in 0..<row.count - 1 { widths[column] = max(widths[column], width(row[column])) }
            rows.append(row)
        }
        var out = ""
        out.reserveCapacity(1 << 20)
        for row in [header] + rows {
            for (column, cell) in row.enumerated() {
                out += cell
                if column < row.count - 1 {
                    out += String(repeating: " ", count: widths[column] - width(cell) + 2)
                }
            }
            out += "\n"
            if out.utf8.count > 1 << 20 {
                Terminal.write(out, to: 1)
                out.removeAll(keepingCapacity: true)
            }
        }
        Terminal.write(out, to: 1)
    }

    /// Columns a cell takes: its byte count for ASCII, else its number of characters.
    static func width(_ text: String) -> Int {
        text.utf8.allSatisfy { $0 < 0x80 } ? text.utf8.count : text.count
    }

    static func clip(_ text: String) -> String {
        width(text) <= nameWidth ? text : String(text.prefix(nameWidth - 1)) + "…"
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
