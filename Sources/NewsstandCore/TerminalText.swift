/// Text from outside (names, titles, archive paths, server messages) made safe for one line of a terminal.
package enum TerminalText {
    /// Escapes what must not reach a terminal or break a one-line message: C0 and C1 control characters
    /// (newlines, escape sequences), DEL, and the Unicode bidirectional overrides that can make a name read
    /// differently from what it is. Everything else, including any other non-ASCII text, is kept.
    package static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
