import Foundation

/// The rules for an issue's name: what the library accepts, and how a feed item's title becomes one.
package enum IssueName {
    /// The longest name, in UTF-8 bytes.
    static let maxLength = 1024

    /// The name's canonical (NFC) form: what its record key hashes, so both spellings of "é" find one record.
    /// An ASCII name is its own NFC form and skips Foundation's normaliser, which went through CFString and
    /// took a tenth of `import`'s CPU.
    package static func canonical(_ name: String) -> String {
        name.utf8.allSatisfy { $0 < 0x80 } ? name : name.precomposedStringWithCanonicalMapping
    }

    /// - Throws: `.invalidIssueName` for a name that is empty, too long, or holds a control or
    ///   bidirectional control character.
    package static func validate(_ name: String) throws {
        if name.allSatisfy(\.isWhitespace) {
            throw NewsstandError(.invalidIssueName, "an issue name cannot be empty")
        }
        if name.utf8.count > maxLength {
            throw NewsstandError(
                .invalidIssueName,
                "the issue name is \(name.utf8.count) bytes long; at most \(maxLength) are allowed")
        }
        // Shown raw, an override makes the name read differently from what it is (and from its folder's name).
        let isBidiControl = { (scalar: Unicode.Scalar) in
            (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
        if let bad = name.unicodeScalars.first(where: isBidiControl) {
            throw NewsstandError(
                .invalidIssueName,
                "the issue name \"\(TerminalText.escaped(name))\" contains a bidirectional control character "
                    + "(U+\(String(bad.value, radix: 16, uppercase: true)))")
        }
        if let bad = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let hex = String(bad.value, radix: 16, uppercase: true)
            throw NewsstandError(
                .invalidIssueName,
                "the issue name \(name.debugDescription) contains a control character (U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex))"
            )
        }
    }

    /// A title as an issue name: control characters and runs of white space become one space, at most
    /// 200 characters.
    package static func fromTitle(_ title: String) -> String {
        var out = ""
        var space = false
        for scalar in title.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
                space = !out.isEmpty
                continue
            }
            if space { out.unicodeScalars.append(" ") }
            space = false
            out.unicodeScalars.append(scalar)
        }
        return out.count > 200 ? String(out.prefix(200)) : out
    }
}
