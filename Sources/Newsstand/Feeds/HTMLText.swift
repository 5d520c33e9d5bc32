/// Escaped HTML as plain text, for the text fields that carry HTML (an Atom `type="html"` title): tags
/// dropped, the predefined entities, `&nbsp;` and numeric references replaced; anything else kept as written.
enum HTMLText {
    static func plain(_ html: String) -> String {
        var out = ""
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: ">") else {
                rest = rest[open...]
                break
            }
            out += " "  // a tag between two words separates them; runs of spaces collapse later
            rest = rest[rest.index(after: close)...]
        }
        out += rest
        return decodeEntities(out)
    }

    /// Replaces `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&nbsp;`, `&#N;` and `&#xH;`.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest.index(after: amp)
            guard let semicolon = rest[after...].prefix(12).firstIndex(of: ";"),
                let scalar = scalar(rest[after..<semicolon])
            else {
                out.append("&")
                rest = rest[after...]
                continue
            }
            out.unicodeScalars.append(scalar)
            rest = rest[rest.index(after: semicolon)...]
        }
        out += rest
        return out
    }

    private static func scalar(_ name: Substring) -> Unicode.Scalar? {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return "\u{A0}"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let hex = digits.first == "x" || digits.first == "X"
            // At most 8 digits: the value fits a UInt32 whatever they are.
            let body = hex ? digits.dropFirst() : digits
            guard !body.isEmpty, body.count <= 8, let value = UInt32(body, radix: hex ? 16 : 10) else { return nil }
            guard value != 0, let scalar = Unicode.Scalar(value) else { return "\u{FFFD}" }
            return scalar
        }
    }
}
