import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Finishing a change that a killed process left half-written.
extension Catalog {
    /// Finishes what a killed writer left: re-derives the index lines of the keys in its intent, deletes the
    /// temporary files it may have left (``removeTemporariesOfDeadWriters(digits:)``), then rebuilds a missing
    /// index.
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
            // Before the intent goes: a kill in this sweep leaves the intent, and the next writer sweeps again.
            try removeTemporariesOfDeadWriters(digits: digits)
            try POSIX.unlinkIfPresent(layout.intent)
        } else if !POSIX.exists(layout.index) {
            // A rebuild killed half-way left the index missing, and perhaps its temporary.
            try removeTemporariesOfDeadWriters(digits: try currentDigits())
            try rebuildIndex()
        }
    }

    /// Deletes what writers killed inside a change left in the folders that only catalog writers write: the
    /// temporary files of buckets (`issues-N/.P.jsonl.tmp-PID-R`), of the saved list's markers, and of the
    /// index and the intent. Every catalog writer holds the lock, and so does the caller, so no live process
    /// is writing any of them: each is a dead writer's (the PID in the name is not trusted; it may have
    /// been reused). Run only when an intent says a change was cut short (the only time there can be
    /// any, with a missing index's rebuild), so a change that went through never lists these folders.
    func removeTemporariesOfDeadWriters(digits: Int) throws {
        for folder in [layout.records(digits: digits), layout.pending] {
            for name in Self.entries(of: folder) where LibraryLayout.isTemporary(name) {
                try POSIX.unlinkIfPresent("\(folder)/\(name)")
            }
        }
        for name in Self.entries(of: layout.catalog)
        where LibraryLayout.isTemporary(name, of: "index.jsonl") || LibraryLayout.isTemporary(name, of: "summary.jsonl")
            || LibraryLayout.isTemporary(name, of: "intent")
        {
            try POSIX.unlinkIfPresent("\(layout.catalog)/\(name)")
        }
    }

    private static func entries(of folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []  // none yet: nothing to delete
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
