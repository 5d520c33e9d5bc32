import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Opening: the version marker (`library.json`), creating a new catalog, upgrading a version-1 one,
/// refusing a newer or damaged one, and the bucket depth every read and write starts from.
extension Catalog {
    /// Makes the catalog usable: creates a new one (when `create`), upgrades a version-1 `library.json`,
    /// and refuses one from a newer version or one that cannot be read, leaving it untouched.
    /// - Throws: `.libraryUnavailable` when there is no library and `create` is false;
    ///   `.manifestUnreadable`, `.manifestFromNewerVersion`.
    package func prepare(create: Bool) throws {
        switch try readMarker() {
        case .current(let digits):
            // A backup left by an upgrade that committed but was killed before deleting it, and a split killed
            // before or after its commit (its record says which depth goes). Another depth's folder without
            // that record is refused, never deleted: it may hold the only copy of its records.
            if POSIX.exists(layout.manifestBackup) || depthsNeedSettling(current: digits) {
                try withLock {
                    guard case .current(let digits) = try readMarker() else { return }
                    try POSIX.unlinkIfPresent(layout.manifestBackup)
                    try settleDepths(current: digits)
                }
            }
        case .missing:
            guard create else {
                throw NewsstandError(.libraryUnavailable, "there is no library at \(layout.root)")
            }
            try withLock {
                guard case .missing = try readMarker() else { return }
                // A catalog folder without library.json (deleted by hand) keeps its buckets.
                let digits = existingBucketDigits() ?? 2
                try makeEmptyCatalog(at: layout.catalog, digits: digits)
                if !POSIX.exists(layout.index) { try rebuildIndex(digits: digits) }
                try writeMarker(digits: digits)
            }
        case .version1:
            try withLock {
                guard case .version1(let data) = try readMarker() else { return }
                try CatalogUpgrade(catalog: self).run(version1: data)
            }
        case .version2:
            // Same records; only the marker changes (see `Catalog.version`), so that version 2 refuses it.
            try withLock {
                guard case .version2(let digits) = try readMarker() else { return }
                try writeMarker(digits: digits)
            }
        }
    }

    package enum Marker {
        case missing
        case current(digits: Int)
        case version1(Data)
        case version2(digits: Int)
    }

    /// Reads `library.json`'s version.
    package func readMarker() throws -> Marker {
        let path = layout.manifest
        guard let data = try AtomicFile.read(path) else { return .missing }
        let (version, digits): (Int64?, Int64?) = try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do {
                var reader = JSONReader(bytes: bytes)
                try reader.expect(UInt8(ascii: "{"))
                var version: Int64?
                var digits: Int64?
                var first = true
                while let key = try reader.nextKey(first: first) {
                    first = false
                    if key == "version", case .integer(let value) = try reader.readValue() {
                        version = value
                    } else if key == "bucketDigits", case .integer(let value) = try reader.readValue() {
                        digits = value
                    } else {
                        try reader.skipValue()
                    }
                }
                return (version, digits)
            } catch {
                throw NewsstandError(
                    .manifestUnreadable, "\(path) is not a valid library manifest (\(error)); it was left untouched",
                    underlying: error)
            }
        }
        guard let version, version >= 1 else {
            throw NewsstandError(
                .manifestUnreadable, "\(path) has no valid \"version\"; it was left untouched")
        }
        if version > Self.version {
            throw NewsstandError(
                .manifestFromNewerVersion,
                "\(path) has version \(version), newer than this issues understands (\(Self.version)); it was left untouched"
            )
        }
        if version == 1 { return .version1(data) }
        guard let digits, (1...8).contains(digits) else {
            throw NewsstandError(.manifestUnreadable, "\(path) has no valid \"bucketDigits\"; it was left untouched")
        }
        return version == 2 ? .version2(digits: Int(digits)) : .current(digits: Int(digits))
    }

    /// Writes the current version's `library.json` (atomically): the commit point of a new or upgraded catalog,
    /// and of a bucket split.
    func writeMarker(digits: Int) throws {
        let text = """
            {"bucketDigits":\(digits),"catalog":".catalog","format":"issue records in JSON-lines buckets .catalog/issues-N/<first N hex digits of the key>.jsonl; a JSON-lines index in .catalog/index.jsonl","version":\(Self.version)}

            """
        try AtomicFile.write(Data(text.utf8), to: layout.manifest, durable: durable)
    }

    func makeEmptyCatalog(at base: String, digits: Int) throws {
        try POSIX.makeDirectory(base)
        try POSIX.makeDirectory("\(base)/issues-\(digits)")
        try POSIX.makeDirectory(base + "/pending")
    }

    /// The bucket digits in force (read from `library.json`).
    func currentDigits() throws -> Int {
        guard case .current(let digits) = try readMarker() else {
            throw NewsstandError(.manifestUnreadable, "\(layout.manifest) is missing or not version \(Self.version)")
        }
        return digits
    }

    fileprivate func existingBucketDigits() -> Int? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.catalog)) ?? []
        return names.compactMap { $0.hasPrefix("issues-") ? Int($0.dropFirst(7)) : nil }.max()
    }
}
