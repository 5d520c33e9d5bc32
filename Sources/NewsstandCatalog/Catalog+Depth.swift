// `struct stat` reaches Swift through the shim module.
internal import CSystemShims
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The bucket depths on disk against the one `library.json` names. A depth other than the marker's is
/// deleted only when the split record (written under the lock by ``split(from:)``) says it is the half
/// of a split; any other disagreement (a restored or synced `library.json`, a flipped digit) is refused
/// with an error naming both, and only `verify --repair` resolves it, by merging the records it finds.
extension Catalog {
    /// A split in progress: the depth split from and the depth being built (always `from + 1`).
    struct SplitRecord: Equatable {
        var from: Int
        var to: Int
    }

    /// Writes the split record, durably: it must be on disk before the new depth is, or a power cut could
    /// leave a half-built depth that nothing identifies. Called with the lock held.
    func writeSplitRecord(_ split: SplitRecord) throws {
        let text = "{\"from\":\(split.from),\"to\":\(split.to)}\n"
        try AtomicFile.write(Data(text.utf8), to: layout.splitRecord, durable: durable)
    }

    /// Reads the split record, or nil when no split is in progress.
    /// - Throws: `.manifestUnreadable` naming the file when it is not a split record (it is left untouched).
    func readSplitRecord() throws -> SplitRecord? {
        let path = layout.splitRecord
        guard let data = try AtomicFile.read(path) else { return nil }
        let values: (Int64?, Int64?) = try data.withUnsafeBytes { raw in
            var reader = JSONReader(bytes: raw.bindMemory(to: UInt8.self))
            do {
                try reader.expect(UInt8(ascii: "{"))
                var from: Int64?
                var to: Int64?
                var first = true
                while let key = try reader.nextKey(first: first) {
                    first = false
                    switch (key, try reader.readValue()) {
                    case ("from", .integer(let value)): from = value
                    case ("to", .integer(let value)): to = value
                    default: break
                    }
                }
                return (from, to)
            } catch {
                throw NewsstandError(
                    .manifestUnreadable, "\(path) is not a valid split record (\(error)); it was left untouched",
                    underlying: error)
            }
        }
        guard let from = values.0, let to = values.1, (1...7).contains(from), to == from + 1 else {
            throw NewsstandError(.manifestUnreadable, "\(path) is not a valid split record; it was left untouched")
        }
        return SplitRecord(from: Int(from), to: Int(to))
    }

    /// The depths that have a bucket folder (`.catalog/issues-N`, N from 1 to 8), ascending.
    func depthsOnDisk() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.catalog)) ?? []
        return names.compactMap { name -> Int? in
            guard name.hasPrefix("issues-"), let digits = Int(name.dropFirst(7)), (1...8).contains(digits) else {
                return nil
            }
            return digits
        }.sorted()
    }

    /// How many bucket files (records or claims) the folder of depth `digits` holds.
    func bucketFileCount(digits: Int) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.records(digits: digits))) ?? []
        return names.filter { $0.hasSuffix(".jsonl") && !$0.hasPrefix(".") }.count
    }

    /// Whether opening has anything to look at under the lock: a split record, or another depth's folder.
    package func depthsNeedSettling(current digits: Int) -> Bool {
        POSIX.exists(layout.splitRecord) || depthsOnDisk().contains { $0 != digits }
    }

    /// Finishes (committed) or undoes (not committed) a split its record names, and deletes other depths'
    /// folders that hold no bucket file. Called with the lock held.
    /// - Throws: `.manifestUnreadable` naming `library.json`'s depth and what is on disk when another depth
    ///   holds records that no split record accounts for; nothing is deleted then.
    package func settleDepths(current digits: Int) throws {
        if let split = try readSplitRecord() {
            // The marker is the split's commit point: at `from` the new depth is half-built, at `to` the old
            // one is what is left to delete. The depth kept must be there, or the record is not this split's.
            let (kept, dropped) = digits == split.from ? (split.from, split.to) : (split.to, split.from)
            guard digits == split.from || digits == split.to, POSIX.exists(layout.records(digits: kept)) else {
                throw depthMismatch(current: digits, split: split)
            }
            try TreeRemover.remove(layout.records(digits: dropped))
            try POSIX.unlinkIfPresent(layout.splitRecord)
        }
        var holding: [Int] = []
        for other in depthsOnDisk() where other != digits {
            if bucketFileCount(digits: other) == 0 {
                try TreeRemover.remove(layout.records(digits: other))  // no record in it: nothing to lose
            } else {
                holding.append(other)
            }
        }
        if !holding.isEmpty { throw depthMismatch(current: digits, split: nil) }
    }

    /// The refusal: what `library.json` says, what is on disk, that nothing changed, and the way out.
    private func depthMismatch(current digits: Int, split: SplitRecord?) -> NewsstandError {
        let found = depthsOnDisk().map { "issues-\($0) (\(bucketFileCount(digits: $0)) bucket files)" }
        let record = split.map { "; \(layout.splitRecord) names a split from \($0.from) to \($0.to)" } ?? ""
        return NewsstandError(
            .manifestUnreadable,
            "\(layout.manifest) says bucketDigits \(digits), but \(layout.catalog) holds "
                + (found.isEmpty ? "no bucket folder" : found.joined(separator: ", ")) + record
                + "; nothing was changed: run `issues verify --repair` to merge the records on disk into one depth")
    }

    /// Brings every record and claim of every depth on disk into one depth, the deepest, and makes
    /// `library.json` name it: what `verify --repair` does with a depth mismatch. A key found at two depths
    /// with different lines keeps the line of the bucket file written last. Called with the lock held.
    ///
    /// Crash-safe by repetition: the merged depth is written and flushed before the marker names it, and the
    /// other depths are deleted only after; a kill at any point leaves a mismatch that the next run merges
    /// again, to the same result.
    /// - Returns: One line saying what was merged, or nil when there was one depth and it agreed.
    /// - Throws: `.manifestUnreadable` naming a damaged bucket (nothing is written then).
    package func mergeDepths() throws -> String? {
        guard case .current(let marked) = try readMarker() else { return nil }
        let split = try readSplitRecord()
        let holding = depthsOnDisk().filter { bucketFileCount(digits: $0) > 0 }
        if !holding.contains(where: { $0 != marked }) && split == nil && !depthsOnDisk().contains(where: { $0 != marked }) { return nil }
        let target = max(marked, holding.max() ?? marked)

        struct Candidate {
            var line: CatalogBucket.Line
            var written: timespec
        }
        var merged: [String: [String: Candidate]] = [:]  // target bucket path → "kind key" → line
        var conflicts = 0
        var linesPerDepth: [Int: Int] = [:]
        for digits in holding.sorted(by: { ($0 == target ? 0 : 1, $0) < ($1 == target ? 0 : 1, $1) }) {
            try forEachBucket(digits: digits) { bucket in
                var info = stat()
                let written = lstat(bucket.path, &info) == 0 ? info.st_mtim : timespec()
                for line in bucket.lines {
                    let path = layout.bucket(line.key, digits: target)
                    let id = "\(line.kind == .claim ? "claim" : "issue") \(line.key)"
                    linesPerDepth[digits, default: 0] += 1
                    if let existing = merged[path]?[id] {
                        guard existing.line.bytes != line.bytes else { continue }
                        conflicts += 1
                        let newer = (written.tv_sec, written.tv_nsec) > (existing.written.tv_sec, existing.written.tv_nsec)
                        if !newer { continue }
                    }
                    merged[path, default: [:]][id] = Candidate(line: line, written: written)
                }
            }
        }
        try POSIX.makeDirectory(layout.records(digits: target))
        var buckets: [String: CatalogBucket] = [:]
        for (path, lines) in merged {
            buckets[path] = CatalogBucket(path: path, lines: lines.values.map(\.line))
        }
        _ = try writeBuckets(buckets, flushEach: false)
        if durable { try syncFileSystem() }
        CrashPoint.reached("depths-merged")
        try writeMarker(digits: target)
        for digits in depthsOnDisk() where digits != target { try TreeRemover.remove(layout.records(digits: digits)) }
        try POSIX.unlinkIfPresent(layout.splitRecord)
        try rebuildIndex(digits: target)
        let found = holding.map { "issues-\($0) (\(linesPerDepth[$0] ?? 0) record and claim lines)" }
        return "library.json said bucketDigits \(marked); "
            + (found.isEmpty ? "no records on disk" : found.joined(separator: ", "))
            + " merged into issues-\(target), which library.json now names"
            + (conflicts > 0 ? " (\(conflicts) keys found twice: the line written last kept)" : "")
    }
}
