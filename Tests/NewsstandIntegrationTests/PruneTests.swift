import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// `prune` over many random libraries (seeded): issues with dates, sizes, pins, publications and
/// downloads in flight, content on disk written directly. Each library is pruned once as a dry run and
/// once for real, and the promises of the SPEC are checked on what happened on disk.
@Suite(.timeLimit(.minutes(5))) struct PruneTests {
    static let today = IssueDate(year: 2026, month: 11, day: 23)!

    /// A generated issue and how it was set up on disk.
    struct Planted {
        var name: String
        var date: IssueDate
        var group: String
        var pinned: Bool
        var inFlight: Bool
    }

    /// A random library: up to four publications (some issues with a stored publication, some by name),
    /// each issue with 0–2 placed files of random sizes, some pinned, some with a download in flight
    /// (a partial file whose asset lock this process holds, as a downloading process would).
    func plant(
        _ library: Library, seed: UInt64, locks: inout [AssetLock]
    ) async throws -> [Planted] {
        var rng = SeededGenerator(state: seed)
        let publications = ["The Daily", "Weekly", "Gazette", "Podcast"]
        var planted: [Planted] = []
        for n in 0..<Int.random(in: 4...14, using: &rng) {
            let publication = publications[Int.random(in: 0..<publications.count, using: &rng)]
            let date = IssueDate(
                year: 2026, month: Int.random(in: 1...11, using: &rng), day: Int.random(in: 1...28, using: &rng))!
            let stored = Bool.random(using: &rng)
            let name = stored ? "\(publication) special \(n)" : "\(publication) \(date) #\(n)"
            let files = Int.random(in: 0...2, using: &rng)
            let urls = (0..<max(files, 1)).map {
                AssetRequest(url: URL(string: "https://cdn.example.com/\(n)/\($0).pdf")!)
            }
            var issue = try await library.addIssue(
                named: name, date: date, assets: urls, publication: stored ? publication : nil)
            let folder = library.contentURL(for: issue).path
            let inFlight = Int.random(in: 0..<6, using: &rng) == 0
            let pinned = Int.random(in: 0..<5, using: &rng) == 0
            var sizes: [Int64] = []
            if files > 0 {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for index in 0..<files {
                    let size = Int.random(in: 0...40_000, using: &rng)
                    try Data(count: size).write(to: URL(fileURLWithPath: "\(folder)/\(index).pdf"))
                    sizes.append(Int64(size))
                }
            }
            let placed = sizes
            issue = try await runBlocking { [catalog = library.catalog] in
                try catalog.write { changes -> Newsstand.Issue in
                    guard var current = try changes.issue(named: name) else { throw CancellationError() }
                    for index in placed.indices {
                        current.assets[index].state = .downloaded
                        current.assets[index].isArchive = false
                        current.assets[index].fileName = "\(index).pdf"
                        current.assets[index].receivedBytes = placed[index]
                    }
                    current.isPinned = pinned
                    try changes.put(current)
                    return current
                }
            }
            if inFlight, let asset = issue.assets.last {
                let layout = library.layout
                try POSIX.makeDirectory(layout.downloads)
                try Data(count: Int.random(in: 1...9_000, using: &rng)).write(
                    to: URL(fileURLWithPath: layout.partialFile(asset.id)))
                locks.append(try #require(try AssetLock.try(asset.id, layout: layout)))
            }
            planted.append(
                Planted(
                    name: name, date: date, group: publication, pinned: pinned, inFlight: inFlight))
        }
        return planted
    }

    /// Bytes of everything in the library except the catalog (what removals free).
    func bytesOnDisk(_ root: URL) throws -> Int64 {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path).filter {
            $0 != ".catalog" && $0 != "library.json"
        }
        return DiskUsage.bytes(of: names.map { root.path + "/" + $0 })
    }

    static let policies: [PrunePolicy] = [
        PrunePolicy(keep: 2, today: today),
        PrunePolicy(keep: 0, today: today),
        PrunePolicy(olderThanDays: 120, today: today),
        PrunePolicy(maxBytes: 60_000, today: today),
        PrunePolicy(maxBytes: 0, today: today),
        PrunePolicy(keep: 3, olderThanDays: 200, maxBytes: 100_000, today: today),
    ]

    @Test(arguments: 0..<24)
    func aPruneKeepsItsPromisesOnARandomLibrary(seed: Int) async throws {
        let policy = Self.policies[seed % Self.policies.count]
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            var locks: [AssetLock] = []
            let planted = try await plant(library, seed: UInt64(seed) &* 7919 &+ 17, locks: &locks)
            let byName = Dictionary(uniqueKeysWithValues: planted.map { ($0.name, $0) })
            let before = try bytesOnDisk(root)

            let dry = try await library.prune(policy, dryRun: true)
            #expect(dry.dryRun)
            #expect(try bytesOnDisk(root) == before, "a dry run changes nothing on disk")
            #expect(try await library.summaries().count == planted.count)

            let real = try await library.prune(policy)
            #expect(!real.dryRun)
            // The dry run listed exactly what the real run removed, with the same figures.
            #expect(real.removed.map(\.name) == dry.removed.map(\.name), "seed \(seed)")
            #expect(real.removed.map(\.bytes) == dry.removed.map(\.bytes))
            #expect(real.bytesFreed == dry.bytesFreed)
            #expect(Set(real.spared.map(\.name)) == Set(dry.spared.map(\.name)))

            // Never a pinned or in-flight issue.
            for removal in real.removed {
                let issue = try #require(byName[removal.name])
                #expect(!issue.pinned && !issue.inFlight, "\(removal.name) was protected")
            }
            // The bytes freed are exact: what left the disk.
            let after = try bytesOnDisk(root)
            #expect(before - after == real.bytesFreed, "seed \(seed): \(before) - \(after) != \(real.bytesFreed)")
            #expect(real.bytesBefore == before)
            #expect(real.bytesAfter == after)

            let remaining = try await library.issues()
            #expect(Set(remaining.map(\.name)) == Set(planted.map(\.name)).subtracting(real.removed.map(\.name)))
            func isProtected(_ name: String) -> Bool { byName[name].map { $0.pinned || $0.inFlight } ?? true }
            if let keep = policy.keep {
                // Every unprotected issue left ranks among the newest `keep` of its group.
                for issue in remaining where !isProtected(issue.name) {
                    let group = try #require(byName[issue.name]).group
                    let newer = planted.filter {
                        $0.group == group && ($0.date > issue.date || ($0.date == issue.date && $0.name < issue.name))
                    }
                    #expect(newer.count < keep, "\(issue.name) should have gone (keep \(keep))")
                }
            }
            if let days = policy.olderThanDays {
                for issue in remaining where !isProtected(issue.name) {
                    #expect(issue.date.dayNumber >= Self.today.dayNumber - days)
                }
            }
            if let budget = policy.maxBytes {
                // At or under budget whenever that is possible without touching protected issues.
                if after > budget {
                    #expect(real.overBudget)
                    #expect(
                        remaining.allSatisfy { isProtected($0.name) },
                        "seed \(seed): over budget with unprotected issues left")
                } else {
                    #expect(!real.overBudget)
                }
            }
            withExtendedLifetime(locks) {}
            locks.removeAll()
            // The library is consistent afterwards: nothing for verify to repair.
            let report = try await library.verify(issues: nil, options: VerifyOptions())
            #expect(report.problems.filter { $0.kind != .staleFile }.isEmpty, "\(report.problems)")
        }
    }

    /// An issue whose folder lock another holder has (it is being filled or removed) is spared as in flight,
    /// by the dry run's plan (which probes only the lock files `.staging` lists) and by the real run.
    @Test func anIssueWhoseFolderIsLockedIsSparedAsInFlight() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            for day in 1...3 {
                try await library.addIssue(named: "Daily \(day)", date: IssueDate(year: 2026, month: 11, day: day)!)
            }
            let oldest = try #require(try await library.issue(named: "Daily 1"))
            try POSIX.makeDirectory(library.layout.staging)
            let held = try #require(try FileLock.try(path: library.layout.issueLock(oldest.lockName)))
            for dryRun in [true, false] {
                let report = try await library.prune(PrunePolicy(keep: 1, today: Self.today), dryRun: dryRun)
                #expect(report.removed.map(\.name) == ["Daily 2"])
                #expect(report.spared.map(\.name) == ["Daily 1"])
                #expect(report.spared.first?.protection == .inFlight)
            }
            withExtendedLifetime(held) {}
        }
    }

    @Test func aSubscriptionsOwnKeepTouchesOnlyItsIssues() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            for day in 1...5 {
                try await library.addIssue(named: "Feed item \(day)", date: IssueDate(year: 2026, month: 11, day: day)!)
                try await library.addIssue(named: "Hand \(day)", date: IssueDate(year: 2026, month: 11, day: day)!)
            }
            try await runBlocking { [catalog = library.catalog] in
                try catalog.write { changes in
                    for day in 1...5 {
                        try changes.update(named: "Feed item \(day)") {
                            $0.origin = .init(subscriptionID: day == 5 ? "other" : "sub-1", itemID: "\(day)")
                        }
                    }
                }
            }
            let report = try await library.prune(PrunePolicy(keep: 1, subscriptionID: "sub-1", today: Self.today))
            #expect(report.removed.map(\.name) == ["Feed item 1", "Feed item 2", "Feed item 3"])
            #expect(report.removed.allSatisfy { $0.group == "subscription sub-1" })
            #expect(try await library.summaries().count == 7)
        }
    }

    @Test(arguments: [
        ("The Daily 2026-11-20", "The Daily"), ("Podcast #12", "Podcast"), ("Monthly No. 5 (2)", "Monthly"),
        ("Weekly: 47", "Weekly"), ("Gazette 20.11.2026", "Gazette"), ("1999", "1999"), ("Plain Name", "Plain Name"),
        ("Episode 4", "Episode"),
    ])
    func publicationsAreNamesWithoutTheirNumbering(name: String, publication: String) {
        #expect(Newsstand.Issue.publicationName(fromIssueName: name) == publication)
    }

    @Test func pinsAreStoredIndexedAndBackwardReadable() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: Self.today)
            try await library.addIssue(named: "B", date: Self.today)
            try await library.pin(issuesNamed: ["A"])
            #expect(try await library.issue(named: "A")?.isPinned == true)
            #expect(try await library.summaries().first { $0.name == "A" }?.isPinned == true)
            #expect(try await library.summaries().first { $0.name == "B" }?.isPinned == false)
            await #expect(throws: NewsstandError.self) { try await library.pin(issuesNamed: ["B", "Nope"]) }
            #expect(try await library.issue(named: "B")?.isPinned == false, "nothing changed on an error")
            try await library.unpin(issuesNamed: ["A"])
            #expect(try await library.summaries().allSatisfy { !$0.isPinned })
            // A record written before pins existed reads as unpinned.
            let record = #"{"assets":[],"date":"2026-11-20","folder":"Old","name":"Old","status":"none","version":2}"#
            let old = try Array(record.utf8).withUnsafeBufferPointer { try IssueRecord.decode($0, path: "old") }
            #expect(!old.isPinned)
        }
    }
}
