import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Growing the bucket depth: what keeps a change's cost bounded as the library grows.
extension Catalog {
    /// Splits the buckets ahead of adding `count` issues when the library would outgrow them.
    package func prepareForAdding(_ count: Int) throws {
        guard count > 1000 else { return }
        try withLock {
            try recover()
            let digits = try currentDigits()
            let live = try CatalogIndexReader(path: layout.index)?.liveEntries().count ?? 0
            var depth = digits
            while depth < Catalog.digits(forCount: live + count) {
                try split(from: depth)
                depth += 1
            }
        }
    }

    /// Splits every bucket into sixteen, one more key digit: records the split, builds the new depth beside
    /// the old one, commits by rewriting `library.json`, then deletes the old depth and the record. Readers
    /// that meet a missing bucket look again at the new depth. Runs under the lock; a crash before the commit
    /// leaves the old depth in force (the next open removes the half-built folder its record names), after it
    /// the new one (the next open removes the old folder).
    func split(from digits: Int) throws {
        let next = digits + 1
        let old = layout.records(digits: digits)
        let new = layout.records(digits: next)
        // Whatever another depth holds must be accounted for first: a folder of depth `next` that no split
        // record names is not ours to replace.
        try settleDepths(current: digits)
        try writeSplitRecord(SplitRecord(from: digits, to: next))
        CrashPoint.reached("split-recorded")
        try POSIX.makeDirectory(new)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: old)) ?? []).sorted()
        for name in names where name.hasSuffix(".jsonl") && !name.hasPrefix(".") {
            let bucket = try CatalogBucket.load("\(old)/\(name)")
            var children: [String: CatalogBucket] = [:]
            for line in bucket.lines {
                let path = layout.bucket(line.key, digits: next)
                children[path, default: CatalogBucket(path: path, lines: [])].append(line)
            }
            for (path, child) in children { try AtomicFile.write(Data(child.encoded()), to: path, durable: false) }
        }
        if durable { try syncFileSystem() }
        CrashPoint.reached("split-built")
        try writeMarker(digits: next)
        CrashPoint.reached("split-committed")
        try TreeRemover.remove(old)
        try POSIX.unlinkIfPresent(layout.splitRecord)
    }
}
