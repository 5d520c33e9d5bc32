import Foundation
import NewsstandCore

/// Opening: the version marker (`library.json`), creating a new catalog, upgrading an older one, and
/// refusing a newer or damaged one, leaving it untouched.
extension Catalog {
    /// Makes the catalog usable: creates a new one (when `create`), upgrades a version 1, 2 or 3 library, and
    /// refuses one from a newer version or one that cannot be read, leaving it untouched.
    /// - Throws: `.libraryUnavailable` when there is no library and `create` is false;
    ///   `.manifestUnreadable`, `.manifestFromNewerVersion`.
    package func prepare(create: Bool) throws {
        switch try readMarker() {
        case .current:
            // Files of the older catalog that an upgrade killed after its commit had not deleted yet.
            if CatalogUpgrade.leftovers(layout).contains(where: POSIX.exists) {
                try withLock { try CatalogUpgrade.removeLeftovers(layout) }
            }
            _ = try openDatabase(create: false)
        case .missing:
            guard create else {
                throw NewsstandError(.libraryUnavailable, "there is no library at \(layout.root)")
            }
            try withLock {
                guard case .missing = try readMarker() else { return }
                try POSIX.makeDirectory(layout.catalog)
                // A catalog folder whose library.json was deleted by hand keeps what it holds: its records are
                // upgraded (an older version's), or its database is opened again.
                if let digits = CatalogUpgrade.bucketDigitsOnDisk(layout), !POSIX.exists(layout.database) {
                    try CatalogUpgrade(catalog: self).run(buckets: digits)
                    return
                }
                _ = try openDatabase(create: true)
                try writeMarker()
            }
        case .version1:
            try withLock {
                guard case .version1(let data) = try readMarker() else { return }
                try CatalogUpgrade(catalog: self).run(version1: data)
            }
        case .buckets:
            try withLock {
                guard case .buckets(_, let digits) = try readMarker() else { return }
                try CatalogUpgrade(catalog: self).run(buckets: digits)
            }
        }
    }

    package enum Marker {
        case missing
        case current
        case version1(Data)
        /// Version 2 or 3: records in JSON-lines buckets of `digits` key digits.
        case buckets(version: Int, digits: Int)
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
        if version == Self.version { return .current }
        if version == 1 { return .version1(data) }
        guard let digits, (1...8).contains(digits) else {
            throw NewsstandError(.manifestUnreadable, "\(path) has no valid \"bucketDigits\"; it was left untouched")
        }
        return .buckets(version: Int(version), digits: Int(digits))
    }

    /// Writes the current version's `library.json` (atomically): the commit point of a new or upgraded catalog.
    func writeMarker() throws {
        let text = """
            {"catalog":".catalog/catalog.sqlite","format":"SQLite: the issues' JSON records in table issues (column record), the saved list of pending downloads in pending, the event log in events","version":\(Self.version)}

            """
        try AtomicFile.write(Data(text.utf8), to: layout.manifest, durable: durable)
    }
}
