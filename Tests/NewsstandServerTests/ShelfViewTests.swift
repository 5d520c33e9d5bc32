import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

@testable import NewsstandCatalog
@testable import NewsstandServer

/// The shelf's packed view: the search folds case as `String.lowercased()` would, over the packed bytes; the view
/// served after each change is the catalog as `list` reads it.
@Suite(.timeLimit(.minutes(2))) struct ShelfViewTests {
    /// 60 random changes (adds on days that already hold issues, names that sort around each other, pins,
    /// removals), each followed by the served view: it must list what `list` lists, entry for entry and name for
    /// name, and be read again only when the catalog changed.
    @Test func theServedViewFollowsEveryChangeAsListSeesIt() async throws {
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
                    let served = try shelf.snapshot()
                    if try library.catalog.generation() != previous.generation {
                        #expect(served !== previous, "round \(round): a change left the old view")
                    }
                    #expect(try shelf.snapshot() === served, "round \(round): an unchanged catalog was read again")
                    let listed = Array(try await library.listing())
                    // Compared as Booleans: a failure names the round, not two arrays of a hundred entries.
                    let sameNames = listed.map(\.name) == (0..<served.names.count).map { served.names[$0] }
                    let sameEntries = listed.map { ShelfEntry(day: Int32($0.date.year * 10_000 + $0.date.month * 100 + $0.date.day), status: $0.status, isPinned: $0.isPinned) } == served.entries
                    #expect(sameNames && sameEntries, "round \(round)")
                    #expect(served.names.count == names.count)
                    previous = served
                }
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
