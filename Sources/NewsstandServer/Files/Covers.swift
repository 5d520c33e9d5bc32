import Foundation
import Newsstand

/// An issue's cover: the files the covers work places in the folder under the names the library gives
/// that issue (``Library/coverNames(for:)``: `cover…`, or `issue-cover…` when the content holds a `cover.jpg`
/// of its own), else a generated placeholder.
enum Covers {
    static let originalExtensions = ["jpg", "jpeg", "png", "webp", "gif", "avif"]

    /// The cover file to show at `width` (256 for the shelf, 1024 for the issue page), or nil.
    static func file(in directory: String, names: CoverNames, width: Int) -> String? {
        var candidates = [names.thumbnail(width <= 256 ? 256 : 1024)]
        if width <= 256 { candidates.append(names.thumbnail(1024)) }
        candidates += originalExtensions.map { names.cover($0) }
        for name in candidates {
            let path = directory + "/" + name
            if SafePath.resolve([Substring(name)], inside: directory) != nil { return path }
        }
        return nil
    }

    /// A placeholder: the title and date on a colour derived from the publication (the same publication, the
    /// same colour). Every string is escaped: titles come from feeds.
    static func placeholder(title: String, date: String, publication: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in publication.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let hue = Int(hash % 360)
        let lines = wrap(title, width: 16, maxLines: 5)
        let text = lines.enumerated().map { index, line in
            "<text x=\"20\" y=\"\(60 + index * 30)\" font-size=\"22\" font-weight=\"bold\">\(HTML.escape(line))</text>"
        }.joined()
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="256" height="341" viewBox="0 0 256 341" role="img" aria-label="\(HTML.escape(title))">\
            <rect width="256" height="341" fill="hsl(\(hue), 45%, 32%)"/>\
            <rect x="10" y="10" width="236" height="321" fill="none" stroke="hsl(\(hue), 45%, 70%)" stroke-width="2"/>\
            <g fill="#ffffff" font-family="sans-serif">\(text)\
            <text x="20" y="310" font-size="18">\(HTML.escape(date))</text></g></svg>
            """
    }

    /// Words in lines of at most `width` characters (a longer word is cut), at most `maxLines`.
    static func wrap(_ text: String, width: Int, maxLines: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            let word = word.count > width ? String(word.prefix(width - 1)) + "…" : String(word)
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty { lines.append(line) }
        if lines.count > maxLines { lines = Array(lines.prefix(maxLines - 1)) + ["…"] }
        return lines
    }
}
