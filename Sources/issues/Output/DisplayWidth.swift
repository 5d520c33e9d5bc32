/// Terminal column counts for text, so that progress lines can be cut to fit without wrapping.
///
/// `Character.count` is not a column count: CJK ideographs and most emoji take two columns, combining
/// marks none. glibc's `wcwidth` would know, but only under a UTF-8 `setlocale`, which the process
/// may not have; so the East Asian Wide/Fullwidth ranges (Unicode's EastAsianWidth.txt, condensed)
/// are kept here.
enum DisplayWidth {
    /// The number of columns `text` takes on a terminal.
    static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The number of columns one grapheme cluster takes: 0, 1 or 2.
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) { return 0 }
        if first.value < 0x7F { return 1 }
        // An emoji presentation selector (U+FE0F) turns a text-style symbol into a two-column emoji.
        if scalars.contains(where: { isWide($0) || $0.value == 0xFE0F }) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return 1
        }
    }

    /// `text` cut to at most `width` columns; a cut text ends in `ellipsis` (counted in the width).
    static func clip(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        let room = width - of(ellipsis)
        guard room >= 0 else { return String(repeating: ".", count: width) }
        var out = ""
        var used = 0
        for character in text {
            let w = of(character)
            if used + w > room { break }
            out.append(character)
            used += w
        }
        return out + ellipsis
    }

    /// `text` cut at its start to at most `width` columns, the cut marked by a leading `ellipsis`: for text
    /// whose end matters most (where a file went).
    static func clipLeading(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        let room = width - of(ellipsis)
        guard room >= 0 else { return String(repeating: ".", count: width) }
        var kept: [Character] = []
        var used = 0
        for character in text.reversed() {
            let w = of(character)
            if used + w > room { break }
            kept.append(character)
            used += w
        }
        return ellipsis + String(kept.reversed())
    }

    /// `text` followed by spaces up to `width` columns (never cut).
    static func pad(_ text: String, to width: Int) -> String {
        let used = of(text)
        return used >= width ? text : text + String(repeating: " ", count: width - used)
    }

    /// `text` with control characters (C0, DEL, C1) shown as `?`: a name from the catalog, a feed or a URL must
    /// not be able to move the cursor or change the terminal's state.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(isControl(scalar) ? "?" : scalar) }
        return String(out)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isEmojiPresentation { return true }
        let v = scalar.value
        return wideRanges.contains { $0.contains(v) }
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks, outside the emoji that `isEmojiPresentation` covers.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initial consonants
        0x2329...0x232A,  // angle brackets
        0x2E80...0x303E,  // CJK radicals, Kangxi, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, CJK compatibility
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x1B000...0x1B2FF,  // Kana supplement and extensions
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B–F, compatibility supplement
        0x30000...0x3FFFD,  // CJK extension G and later
    ]
}
