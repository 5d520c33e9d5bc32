/// Escaped HTML as plain text, for the text fields that carry HTML (an Atom `type="html"` title): tags
/// dropped, the predefined entities, HTML's named ones (``HTMLEntities``) and numeric references replaced;
/// anything else kept as written.
/// Works on Unicode scalars: as characters, "<" followed by a combining mark would not be "<".
enum HTMLText {
    static func plain(_ html: String) -> String {
        // Over UTF-8 bytes: `<` and `>` are ASCII and never part of a longer character's bytes.
        var out: [UInt8] = []
        out.reserveCapacity(html.utf8.count)
        var inTag = false
        var tag: [UInt8] = []
        for byte in html.utf8 {
            if inTag {
                tag.append(byte)
                if byte == UInt8(ascii: ">") {
                    inTag = false
                    tag.removeAll(keepingCapacity: true)
                    out.append(0x20)  // a tag between two words separates them; runs of spaces collapse later
                }
            } else if byte == UInt8(ascii: "<") {
                inTag = true
                tag.append(byte)
            } else {
                out.append(byte)
            }
        }
        out.append(contentsOf: tag)  // an unclosed "<…" is text
        return decodeEntities(String(decoding: out, as: UTF8.self))
    }

    /// Replaces `&lt;`, `&gt;`, `&amp;`, `&quot;`, HTML's named references, `&#N;` and `&#xH;`.
    static func decodeEntities(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.contains("&") else { return text }
        var out = String.UnicodeScalarView()
        var k = 0
        while k < scalars.count {
            guard scalars[k] == "&" else {
                out.append(scalars[k])
                k += 1
                continue
            }
            var end = k + 1
            while end < scalars.count, end - k <= 12, scalars[end] != ";" { end += 1 }
            if end < scalars.count, scalars[end] == ";",
                let scalar = scalar(String(String.UnicodeScalarView(scalars[(k + 1)..<end])))
            {
                out.append(scalar)
                k = end + 1
            } else {
                out.append("&")
                k += 1
            }
        }
        return String(out)
    }

    private static func scalar(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        default:
            guard name.hasPrefix("#") else { return HTMLEntities.scalar(name) }
            let digits = name.unicodeScalars.dropFirst()
            let hex = digits.first == "x" || digits.first == "X"
            let body = String(String.UnicodeScalarView(hex ? digits.dropFirst() : digits))
            // At most 8 digits, all of them digits (no sign): the value fits a UInt32.
            guard !body.isEmpty, body.utf8.count <= 8,
                body.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit && (hex || ("0"..."9").contains($0)) }),
                let value = UInt32(body, radix: hex ? 16 : 10)
            else { return nil }
            guard value != 0, let scalar = Unicode.Scalar(value) else { return "\u{FFFD}" }
            return scalar
        }
    }
}
