import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Finishing a change that a killed process left half-written.
extension Catalog {
    /// Finishes what a killed writer left: re-derives the index lines of the keys in its intent, then
    /// rebuilds a missing index.
    /// Called with the lock held.
    func recover() throws {
        if let data = try AtomicFile.read(layout.intent) {
            let entries = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            let digits = try currentDigits()
            var lines = JSONWriter()
            // Folder claims live in other buckets than their issues' records: put back the claims of the
            // issues the change touched, and drop claims it released whose issue is gone.
            var claims: [String: String?] = [:]
            for key in entries where Catalog.isKey(key) {
                if let issue = try record(key: key, digits: digits) {
                    CatalogIndex.line(key: key, issue: issue, into: &lines)
                    claims[Catalog.folderKey(issue.claimName)] = .some(key)
                } else {
                    CatalogIndex.removal(key: key, into: &lines)
                }
            }
            for entry in entries where entry.hasPrefix("claim ") {
                let folderKey = String(entry.dropFirst(6))
                guard Catalog.isKey(folderKey), claims[folderKey] == nil else { continue }
                let bucket = try CatalogBucket.load(layout.bucket(folderKey, digits: digits))
                if let owner = bucket.claim(folderKey),
                    try record(key: owner, digits: digits).map({ Catalog.folderKey($0.claimName) }) != folderKey
                {
                    claims[folderKey] = .some(nil)
                }
            }
            try setClaims(claims, digits: digits)
            try dropStrayMarkers(ofKeys: Set(entries.filter(Catalog.isKey)), digits: digits)
            try appendToIndex(lines.bytes)
            try recoverEvents(entries, digits: digits)
            try POSIX.unlinkIfPresent(layout.intent)
        } else if !POSIX.exists(layout.index) {
            try rebuildIndex()
        }
    }

    /// Finishes a change a killed process left (its index lines, claims and events), if there is one.
    package func recoverIfNeeded() throws {
        if POSIX.exists(layout.intent) { try withLock { try recover() } }
    }

    /// Rewrites the buckets of claims that differ from `claims` (folder key → owner, or nil to drop).
    private func setClaims(_ claims: [String: String?], digits: Int) throws {
        var buckets: [String: CatalogBucket] = [:]
        for (folderKey, owner) in claims {
            let path = layout.bucket(folderKey, digits: digits)
            var bucket = try buckets[path] ?? CatalogBucket.load(path)
            if bucket.claim(folderKey) != owner { bucket.set(claim: owner, key: folderKey) }
            buckets[path] = bucket
        }
        _ = try writeBuckets(buckets, flushEach: durable)
    }
}
