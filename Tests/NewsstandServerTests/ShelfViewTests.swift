import Foundation
import Testing

@testable import NewsstandServer

/// The shelf's packed view: the search folds case as `String.lowercased()` would, over the packed bytes.
@Suite(.timeLimit(.minutes(1))) struct ShelfViewTests {
    @Test func theSearchMatchesWhatLowerCasedNamesWouldMatch() {
        let names = [
            "The Harbour Gazette 2026-11-20", "LEIPZIG CYCLIST No. 5", "Élan Magazine", "Cafe\u{301} Society", "İstanbul Notes",
            "ÆØÅ Weekly", "a", "",
        ]
        var packed = PackedNames()
        for name in names { packed.append(name) }
        #expect(packed.count == names.count)
        let searches = ["gazette", "harbour g", "cyclist no", "élan", "é", "e", "cafe", "i̇stanbul", "istanbul", "æøå", "a", "zz", "weekly!"]
        for search in searches {
            let needle = Array(search.lowercased().utf8)
            for (position, name) in names.enumerated() {
                let expected = Self.bytes(name.lowercased(), contain: needle)
                #expect(
                    packed.name(at: position, containsLowercased: needle) == expected,
                    "\(name.debugDescription) searched for \(search.debugDescription)")
                #expect(packed[position] == name)
            }
        }
    }

    static func bytes(_ text: String, contain needle: [UInt8]) -> Bool {
        let haystack = Array(text.utf8)
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
