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

    /// Splits every bucket into sixteen, one more key digit: builds the new depth beside the old one,
    /// commits by rewriting `library.json`, then deletes the old depth. Readers that meet a missing
    /// bucket look again at the new depth. Runs under the lock; a crash before the commit leaves the
    /// old depth in force (the half-built folder is removed by the next open), after it the new one.
    func split(from digits: Int) throws {
        let next = digits + 1
        let old = layout.records(digits: digits)
        let new = layout.records(digits: next)
        try TreeRemover.remove(new)
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
    }
}
