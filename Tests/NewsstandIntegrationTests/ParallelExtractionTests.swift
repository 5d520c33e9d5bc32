import Foundation
import Glibc
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// Several workers unpacking one ZIP: the same tree, record and refusals as one worker, and one worker
/// wherever the order of entries could change the result.
@Suite(.timeLimit(.minutes(5))) struct ParallelExtractionTests {
    /// A low threshold, so small fixtures take the parallel path.
    static func extractor(workers: Int, limits: UnpackLimits = .default) -> ArchiveExtractor {
        var extractor = ArchiveExtractor(limits: limits)
        extractor.maxWorkers = workers
        extractor.parallelThreshold = 50
        return extractor
    }

    /// 300 files in explicit folders (each listed before its files, with its own time), so that a folder's
    /// final time is set by one worker while the other still writes files into it.
    static func folderedZip(_ path: String) throws {
        var entries: [FixtureEntry] = []
        for folder in 0..<6 {
            entries.append(.directory("part-\(folder)/"))
            for file in 0..<50 {
                let index = folder * 50 + file
                let content = Array("page \(index)\n".utf8) + randomBytes(index % 7 * 97)
                entries.append(.file("part-\(folder)/page-\(index).txt", content, mode: 0o640, mtime: 1_600_000_000 + index))
            }
        }
        try ArchiveFixtures.write(entries, format: .zip, to: path)
    }

    @Test("three workers leave the same tree and record as one")
    func sameResultAsOneWorker() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.zip)
        try Self.folderedZip(archive)
        let one = try Self.extractor(workers: 1).extract(archiveAt: archive, into: sandbox.staging)
        let parallelStaging = sandbox.path("staging-parallel")
        try FileManager.default.createDirectory(atPath: parallelStaging, withIntermediateDirectories: false)
        let three = try Self.extractor(workers: 3).extract(archiveAt: archive, into: parallelStaging)

        #expect(one.workers == 1)
        #expect(three.workers == 3)
        #expect(three.entries == 306 && three.entries == one.entries)
        #expect(three.bytes == one.bytes)
        #expect(three.placed == one.placed, "the record lists entries in archive order")
        // The staging folders themselves ("") were made at different times.
        let expected = snapshot(sandbox.staging).filter { !$0.key.isEmpty }
        let got = snapshot(parallelStaging).filter { !$0.key.isEmpty }
        #expect(expected.count == 306)
        let differing = Set(expected.keys).union(got.keys).filter { expected[$0] != got[$0] }.sorted()
        #expect(differing.isEmpty, "files, modes, times, folder times: \(differing.prefix(5).map { "\($0): \(expected[$0] ?? "-") vs \(got[$0] ?? "-")" })")
    }

    /// Extracts `archive` into a new staging folder `name` and returns the refusal (nil if none) and the folder.
    static func refusal(
        workers: Int, limits: UnpackLimits, archive: String, sandbox: Sandbox, name: String
    ) throws -> (error: ArchiveError?, staging: String) {
        let staging = sandbox.path(name)
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        let error = #expect(throws: ArchiveError.self) {
            try extractor(workers: workers, limits: limits).extract(archiveAt: archive, into: staging)
        }
        return (error, staging)
    }

    @Test("a limit stops several workers as it stops one, and nothing passes it")
    func limitsHoldAcrossWorkers() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.zip)
        try ArchiveFixtures.manySmallFiles(count: 400, bytesEach: 100, format: .zip, to: archive)
        // Every entry declares 100 bytes, so under a 25,000-byte limit entry 250 is the first that does not
        // fit. One worker names it; several may meet the limit at another entry, as their shares interleave.
        for workers in [1, 2, 4] {
            let bytes = try Self.refusal(
                workers: workers, limits: UnpackLimits(maxTotalBytes: 25_000), archive: archive, sandbox: sandbox,
                name: "bytes-\(workers)")
            #expect(bytes.error?.kind == .limitExceeded)
            if workers == 1 {
                #expect(bytes.error?.entryPath == ArchiveFixtures.manySmallFileNames(count: 400)[250])
            }
            #expect(treeUsage(bytes.staging).bytes <= 25_000)

            // 400 files in 4 folders: 404 objects.
            let objects = try Self.refusal(
                workers: workers, limits: UnpackLimits(maxEntries: 403), archive: archive, sandbox: sandbox,
                name: "objects-\(workers)")
            #expect(objects.error?.kind == .limitExceeded)
            #expect(treeUsage(objects.staging).entries <= 403)
        }

        let atTheLimit = sandbox.path("staging-3")
        try FileManager.default.createDirectory(atPath: atTheLimit, withIntermediateDirectories: false)
        let summary = try Self.extractor(workers: 4, limits: UnpackLimits(maxTotalBytes: 40_000, maxEntries: 404))
            .extract(archiveAt: archive, into: atTheLimit)
        #expect(summary.workers == 4 && summary.bytes == 40_000)
        #expect(treeUsage(atTheLimit).entries == 404)
    }

    @Test("archives whose entry order matters are unpacked by one worker")
    func orderSensitiveArchivesUseOneWorker() throws {
        let sandbox = try Sandbox()
        let files = (0..<60).map { FixtureEntry.file("f\($0).txt", [UInt8(truncatingIfNeeded: $0)]) }
        let cases: [(String, [FixtureEntry])] = [
            ("independent files", files),
            ("a symbolic link", files + [.symlink("link", target: "f1.txt")]),
            ("the same path twice", files + [.file("f1.txt", [9])]),
            ("a file where a folder is needed", files + [.file("f1.txt/inner", [9])]),
            ("an unsafe name", files + [.file("../escape", [9])]),
        ]
        var workers: [String: Int] = [:]
        for (index, (label, entries)) in cases.enumerated() {
            let archive = sandbox.path("case-\(index).zip")
            try ArchiveFixtures.write(entries, format: .zip, to: archive)
            workers[label] = ExtractionPlan.make(forArchiveAt: archive, maximum: 4, threshold: 50).workers
        }
        #expect(
            workers == [
                "independent files": 4, "a symbolic link": 1, "the same path twice": 1,
                "a file where a folder is needed": 1, "an unsafe name": 1,
            ])
        let small = sandbox.path("small.zip")
        try ArchiveFixtures.write(Array(files.prefix(49)), format: .zip, to: small)
        #expect(ExtractionPlan.make(forArchiveAt: small, maximum: 4, threshold: 50).workers == 1)
        let tar = sandbox.archive(.tar)
        try ArchiveFixtures.write(files, format: .tar, to: tar)
        #expect(ExtractionPlan.make(forArchiveAt: tar, maximum: 4, threshold: 50).workers == 1)
    }
}
