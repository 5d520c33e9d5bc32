import Foundation

/// A string that is exactly one harmless path component: never empty, `.`, `..`, hidden (leading dot),
/// never holding `/`, NUL or control characters, and at most `maxUTF8Length` bytes long.
///
/// swift-system's `FilePath.Component` accepts `..`; this type does not.
package struct SafePathComponent: Hashable, Sendable, CustomStringConvertible {
    /// Leaves room under NAME_MAX (255) for a uniqueness suffix and temporary-name decorations.
    package static let maxUTF8Length = 120

    package let value: String
    package var description: String { value }

    /// Accepts `text` only if it already is a safe component (used on names read back from disk).
    package init?(validating text: String) {
        guard SafePathComponent.isSafe(text) else { return nil }
        value = text
    }

    /// Maps any text to a safe, portable component: unsafe characters and those FAT, exFAT, NTFS or SMB
    /// refuse become `_`, leading dots and surrounding spaces go, trailing dots go (Windows drops them, so
    /// `a.` and `a` would be one file there), the length is capped on a character boundary, a reserved device
    /// name (`CON`, `com1.txt`) gets a leading `_`, and an empty result becomes `fallback`.
    ///
    /// The one sanitiser of the library: issue folders, placed files and template components all pass here.
    /// Validation (``init(validating:)``) stays as it was, so folders named before these rules still read.
    package init(sanitizing text: String, fallback: String = "issue") {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(SafePathComponent.isUnsafe(scalar) || SafePathComponent.isNonPortable(scalar) ? "_" : scalar)
        }
        var cleaned = String(scalars).trimmingLeadingDotsAndSpaces()
        cleaned = SafePathComponent.truncated(cleaned, toUTF8Length: SafePathComponent.maxUTF8Length)
            .trimmingTrailingDotsAndSpaces()
        if SafePathComponent.isReservedDeviceName(cleaned) {
            // The cut may land after a space or dot again, so the end is trimmed again.
            cleaned = SafePathComponent.truncated("_" + cleaned, toUTF8Length: SafePathComponent.maxUTF8Length)
                .trimmingTrailingDotsAndSpaces()
        }
        if cleaned.isEmpty { cleaned = SafePathComponent(sanitizing: fallback, fallback: "_").value }
        value = cleaned
    }

    /// The same component with ` (n)` appended, still within the length cap.
    package func withSuffix(_ n: Int) -> SafePathComponent {
        let suffix = " (\(n))"
        let head = SafePathComponent.truncated(value, toUTF8Length: SafePathComponent.maxUTF8Length - suffix.utf8.count)
        return SafePathComponent(unchecked: head.trimmingSpaces() + suffix)
    }

    /// Whether Windows reserves `text` as a device: `CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, in
    /// any case, alone or before an extension (`nul.txt`, `Com1.tar.gz`), and with spaces before the dot.
    package static func isReservedDeviceName(_ text: String) -> Bool {
        let stem = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let base = stem.uppercased().trimmingCharacters(in: .whitespaces)
        if ["CON", "PRN", "AUX", "NUL"].contains(base) { return true }
        // By Character: a superscript digit is two UTF-8 bytes, so `COM¹` is five bytes but four Characters.
        guard base.count == 4, base.hasPrefix("COM") || base.hasPrefix("LPT"), let last = base.last else {
            return false
        }
        // Windows also reserves the superscript digits ¹²³ after COM and LPT.
        return ("1"..."9").contains(last) || "¹²³".contains(last)
    }

    private init(unchecked: String) { value = unchecked }

    package static func isSafe(_ text: String) -> Bool {
        // By byte: "." with a combining mark is one Character, yet the file name still starts with a dot.
        guard !text.isEmpty, text.utf8.count <= maxUTF8Length, text.utf8.first != UInt8(ascii: ".") else {
            return false
        }
        return !text.unicodeScalars.contains(where: isUnsafe)
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0/C1 controls, DEL, NUL
        case 0x2F, 0x5C: return true  // "/" and "\" (the latter for archives made on Windows)
        case 0x2028, 0x2029, 0xFEFF: return true  // line/paragraph separators, BOM
        // Bidirectional embeddings, overrides and isolates: "gpj.exe" shown as "exe.jpg".
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Characters a FAT, exFAT, NTFS or SMB volume refuses in a name (besides the controls and slashes above).
    private static func isNonPortable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case ":", "?", "\"", "*", "|", "<", ">", "\\": return true
        default: return false
        }
    }

    private static func truncated(_ text: String, toUTF8Length limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var length = 0
        for character in text {
            let size = character.utf8.count
            if length + size > limit { break }
            result.append(character)
            length += size
        }
        return result
    }
}

extension String {
    /// Drops dots and spaces from the front until neither is left (". ." would otherwise become "."), by
    /// scalar so that a dot carrying a combining mark goes too.
    fileprivate func trimmingLeadingDotsAndSpaces() -> String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first == "." || first.properties.isWhitespace { scalars.removeFirst() }
        return String(scalars)
    }

    /// Drops dots and spaces from the end: FAT and NTFS strip them, so `a.` and `a` are one name there.
    fileprivate func trimmingTrailingDotsAndSpaces() -> String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last == "." || last.isWhitespace { s.removeLast() }
        return String(s)
    }

    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
