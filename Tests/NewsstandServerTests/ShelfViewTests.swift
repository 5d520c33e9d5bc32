import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

@testable import NewsstandCatalog
@testable import NewsstandServer

/// The shelf's packed view: the search folds case as `String.lowercased()` would, over the packed bytes; a view
/// brought up to date by the lines appended to the index is the view a fresh read of it gives.
@Suite(.timeLimit(.minutes(2))) struct ShelfViewTests {
    /// 60 random changes (adds on days that already hold issues, names that sort around each other, pins,
    /// removals), each followed by the view: the one `updated` makes from the view before must equal a fresh
    /// read of the index, entry for entry and name for name; then a rewritten index is read again.
    @Test func aViewFollowsTheAppendedLinesAsAFreshReadSeesThem() async throws {
        var rng = SeededGenerator(state: 2026)
        try await withTemporaryDirectory { root in
            try await Library.withLibrary(at: root) { library in
                var names: [String] = []
                func date() throws -> IssueDate {
                    try #require(IssueDate("2026-11-\(Int.random(in: 10...14, using: &rng))"))
                }
                for n in 0..<30 {
                    let name = ["Gazette", "gazette", "Élan", "Zeta", "alpha"][n % 5] + " \(n)"
                    try await library.addIssue(named: name, date: try date())
                    names.append(name)
                }
                let shelf = ShelfIndex(catalog: library.catalog)
                var previous = try shelf.snapshot()
                for round in 0..<60 {
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0, 1:
                        let name = ["Gazette", "Élan", "zeta", "Alpha", "Élan "][round % 5] + " new \(round)"
                        try await library.addIssue(named: name, date: try date())
                        names.append(name)
                    case 2:
                        let name = try #require(names.randomElement(using: &rng))
                        _ = try await library.setPinned(Bool.random(using: &rng), issuesNamed: [name])
                    default:
                        let name = names.remove(at: Int.random(in: 0..<names.count, using: &rng))
                        try await library.removeIssue(named: name)
                    }
                    let reader = try library.catalog.openIndex()
                    let followed = try #require(previous.updated(identity: [round], reader: reader), "round \(round)")
                    let fresh = try ShelfSnapshot(identity: [round], reader: reader)
                    #expect(followed.end == fresh.end && followed.indexID == fresh.indexID, "round \(round)")
                    // Compared as Booleans: a failure names the round, not two arrays of a hundred entries.
                    let sameEntries = followed.entries == fresh.entries
                    let positions = 0..<fresh.names.count
                    let sameNames = positions.map { followed.names[$0] } == positions.map { fresh.names[$0] }
                    #expect(sameEntries && sameNames, "round \(round)")
                    #expect(followed.names.count == names.count)
                    // What the shelf serves takes the same path.
                    let served = try shelf.snapshot()
                    let servedSame = served.entries == fresh.entries && served.end == fresh.end
                    #expect(servedSame, "round \(round)")
                    previous = followed
                }
                // A rewritten index has another id: the view is read again, not followed.
                try library.catalog.withLock { try library.catalog.rebuildIndex() }
                #expect(previous.updated(identity: [], reader: try library.catalog.openIndex()) == nil)
                let reread = try shelf.snapshot()
                let fresh = try ShelfSnapshot(identity: [], reader: library.catalog.openIndex())
                let rereadSame = reread.entries == fresh.entries
                #expect(rereadSame)
            }
        }
    }

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
