import Foundation
import Newsstand

/// The text of `show`.
enum TableRenderer {
    static func issue(_ report: IssueReport) -> String {
        var lines = [
            "name:    \(report.name)",
            "date:    \(report.date)",
            "status:  \(report.status)",
            "pinned:  \(report.isPinned ? "yes" : "no")",
            "publication: \(report.publication)",
            "folder:  \(report.directory)",
            "assets:  \(report.assetsDone)/\(report.assetsTotal) done, \(Format.bytes(report.bytes))",
        ]
        if let origin = report.origin { lines.append("from:    \(origin)") }
        if let cover = report.cover {
            let thumbnails = cover.thumbnails.sorted { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }.map(\.value)
            lines.append("cover:   \(cover.file) (from \(cover.source.rawValue)); thumbnails \(thumbnails.joined(separator: ", "))")
            if let refused = cover.refused { lines.append("         refused: \(refused)") }
        }
        for asset in report.assets {
            let size =
                asset.expectedBytes.map { "\(Format.bytes(asset.receivedBytes)) / \(Format.bytes($0))" }
                ?? Format.bytes(asset.receivedBytes)
            lines.append("")
            lines.append("  \(asset.id)  \(asset.state)  \(size)")
            lines.append("    url:    \(asset.url)")
            if let name = asset.fileName { lines.append("    file:   \(name)") }
            if asset.isCoverSource { lines.append("    role:   cover (the feed's image)") }
            if let sha = asset.sha256 { lines.append("    sha256: \(sha)") }
            for (name, value) in asset.headers { lines.append("    header: \(name): \(value)") }
            if !asset.unpack { lines.append("    unpack: no") }
            if let error = asset.error { lines.append("    error:  \(error)") }
        }
        return lines.joined(separator: "\n")
    }

    static func table(header: [String], rows: [[String]]) -> String {
        // Columns, not characters: a CJK name takes two per character.
        var widths = header.map { DisplayWidth.of($0) }
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count {
                widths[i] = max(widths[i], DisplayWidth.of(cell))
            }
        }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (i, cell) in cells.enumerated() {
                text += i == cells.count - 1 ? cell : Format.pad(cell, widths[i]) + "  "
            }
            return text
        }
        var out = [line(header)]
        out.reserveCapacity(rows.count + 1)
        for row in rows { out.append(line(row)) }
        return out.joined(separator: "\n")
    }
}
