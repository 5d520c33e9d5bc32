/// Which publication an issue belongs to, for `prune --keep N` (N newest per publication).
extension Issue {
    /// The publication this issue is grouped under: its stored ``publication`` when it has one, else its
    /// name with a trailing date or number taken off ("The Daily 2026-11-20" → "The Daily",
    /// "Podcast #12" → "Podcast", "Monthly No. 5 (2)" → "Monthly"), else its whole name.
    public var publicationName: String {
        if let publication, !publication.isEmpty { return publication }
        return Issue.publicationName(fromIssueName: name)
    }

    /// Words that only number an issue ("No. 5", "Vol 3", "Episode 12"), dropped with the number after them.
    private static let numberingWords: Set<String> = [
        "no", "no.", "nr", "nr.", "#", "vol", "vol.", "ep", "ep.", "issue", "episode", "number", "part",
    ]

    /// `name` without trailing dates, numbers and the words and punctuation that go with them.
    static func publicationName(fromIssueName name: String) -> String {
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
}
