/// Which publication an issue belongs to, for `prune --keep N` (N newest per publication).
extension Issue {
    /// The publication this issue is grouped under: its stored ``publication`` when it has one, else its
    /// name with a trailing date or number taken off ("The Daily 2026-11-20" → "The Daily",
    /// "Podcast #12" → "Podcast", "Monthly No. 5 (2)" → "Monthly"), else its whole name.
    public var publicationName: String {
        Issue.publicationName(stored: publication, issueName: name)
    }

    /// The rule of ``publicationName`` for an issue known by its report: `stored` when it is set, else the
    /// name's.
    package static func publicationName(stored: String?, issueName: String) -> String {
        if let stored, !stored.isEmpty { return stored }
        return publicationName(fromIssueName: issueName)
    }

    /// Words that only number an issue ("No. 5", "Vol 3", "Episode 12"), dropped with the number after them.
    private static let numberingWords: Set<String> = [
        "no", "no.", "nr", "nr.", "#", "vol", "vol.", "ep", "ep.", "issue", "episode", "number", "part",
    ]

    /// `name` without trailing dates, numbers and the words and punctuation that go with them.
    static func publicationName(fromIssueName name: String) -> String {
        if let ascii = asciiPublicationName(fromIssueName: name) { return ascii }
        var words = name.split(whereSeparator: \.isWhitespace).map(String.init)
        let punctuation: Set<Character> = ["#", "(", ")", "[", "]", ",", ":", "-", "–", "—", "|", "/", "."]
        func isNumbering(_ word: String) -> Bool {
            let core = word.drop { punctuation.contains($0) }.reversed().drop { punctuation.contains($0) }
            guard core.contains(where: \.isNumber) else { return false }
            // Digits with date separators: 2026-11-20, 20.11.2026, 11/20, 12, #12, (2).
            return core.allSatisfy { $0.isNumber || $0 == "-" || $0 == "." || $0 == "/" }
        }
        var dropped = false
        while let last = words.last, words.count > 1 {
            if isNumbering(last) || last.allSatisfy({ punctuation.contains($0) }) {
                words.removeLast()
                dropped = true
            } else if dropped, numberingWords.contains(last.lowercased()) {
                words.removeLast()
            } else {
                break
            }
        }
        guard dropped else { return name }
        // A separator glued to the last word kept ("The Daily: 12" → "The Daily").
        let joined = words.joined(separator: " ")
        let trimmed = String(joined.reversed().drop { punctuation.contains($0) || $0.isWhitespace }.reversed())
        return trimmed.isEmpty ? name : trimmed
    }

    /// ``publicationName(fromIssueName:)`` for an ASCII name, over its bytes: the same words, punctuation and
    /// numbering rules, without a `Character` or a `String` per word (a 100,000-issue `prune` plan spent a
    /// fifth of its time in the general version). Nil when the name is not all ASCII.
    private static func asciiPublicationName(fromIssueName name: String) -> String? {
        var name = name
        // The byte range of the result, nil for the whole name; or no answer at all (not ASCII).
        let answer: [UInt8]?? = name.withUTF8 { bytes -> [UInt8]?? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return .none }
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
            func isPunctuation(_ byte: UInt8) -> Bool {
                switch byte {
                case UInt8(ascii: "#"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "["), UInt8(ascii: "]"),
                    UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "|"), UInt8(ascii: "/"),
                    UInt8(ascii: "."):
                    return true
                default:
                    return false
                }
            }
            var words: [Range<Int>] = []
            var index = 0
            while index < bytes.count {
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                let start = index
                while index < bytes.count, !isSpace(bytes[index]) { index += 1 }
                if index > start { words.append(start..<index) }
            }
            func isNumbering(_ word: Range<Int>) -> Bool {
                var low = word.lowerBound
                var high = word.upperBound
                while low < high, isPunctuation(bytes[low]) { low += 1 }
                while high > low, isPunctuation(bytes[high - 1]) { high -= 1 }
                var digit = false
                for byte in bytes[low..<high] {
                    if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                        digit = true
                    } else if byte != UInt8(ascii: "-"), byte != UInt8(ascii: "."), byte != UInt8(ascii: "/") {
                        return false
                    }
                }
                return digit
            }
            func isNumberingWord(_ word: Range<Int>) -> Bool {
                let lowered = bytes[word].map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
                return numberingWords.contains(String(decoding: lowered, as: UTF8.self))
            }
            var count = words.count
            var dropped = false
            while count > 1 {
                let last = words[count - 1]
                if isNumbering(last) || bytes[last].allSatisfy(isPunctuation) {
                    count -= 1
                    dropped = true
                } else if dropped, isNumberingWord(last) {
                    count -= 1
                } else {
                    break
                }
            }
            guard dropped else { return .some(nil) }
            var joined: [UInt8] = []
            for (n, word) in words[..<count].enumerated() {
                if n > 0 { joined.append(0x20) }
                joined += bytes[word]
            }
            while let last = joined.last, isPunctuation(last) || isSpace(last) { joined.removeLast() }
            return joined.isEmpty ? .some(nil) : .some(joined)
        }
        switch answer {
        case .none: return nil
        case .some(.none): return name
        case .some(.some(let bytes)): return String(decoding: bytes, as: UTF8.self)
        }
    }
}
