/// Text made safe for HTML, XML (OPML, RSS, OPDS, SVG) and Pango markup: the one escape for every string
/// from outside (a feed's title, a URL, an error) that goes into markup the project writes.
package enum MarkupText {
    /// `&`, `<`, `>`, `"` and `'` as references (`&#39;`, which all three languages read), so the text is safe
    /// in element content and in quoted attributes. Control characters other than tab, newline and carriage
    /// return become U+FFFD: XML 1.0 cannot carry them even escaped, and Pango refuses some. By scalar, not by
    /// character: "<" followed by a combining mark is one character that is not "<".
    package static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
