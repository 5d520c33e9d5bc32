import Foundation
import NewsstandCore
import NewsstandArchive

/// What an unpacked asset placed in its issue's folder: one file per asset,
/// `.catalog/content/<asset id>.json`, written once when the asset is placed, read only by `verify`.
///
/// ```
/// {"asset":"…","entries":[{"kind":"file","path":"pages/1.pdf","size":1234},{"kind":"directory","path":"pages"}],
///  "version":1}
/// ```
/// Kept out of the issue records on purpose: an archive of 10,000 files would make its record huge,
/// and every later change of the issue would rewrite the list. Written without an `fsync` of its own: the
/// download run flushes it with the unpacked tree (one `syncfs`) before recording the asset as unpacked,
/// unless `--no-fsync`. Plain files need no record: the issue's own record has their name, size and checksum.
package struct ContentRecord: Sendable, Hashable {
    static let version: Int64 = 1

    package var assetID: String
    package var entries: [PlacedEntry]

    package init(assetID: String, entries: [PlacedEntry]) {
        self.assetID = assetID
        self.entries = entries
    }

    /// Writes the record (atomically, not durably).
    package func write(layout: LibraryLayout) throws {
        var writer = JSONWriter(capacity: 64 + entries.count * 48)
        writer.raw("{")
        writer.key("asset", first: true)
        writer.string(assetID)
        writer.key("entries")
        writer.array(entries) { writer, entry in
            writer.raw("{")
            writer.key("kind", first: true)
            writer.string(entry.kind.rawValue)
            writer.key("path")
            writer.string(entry.path)
            if let size = entry.size {
                writer.key("size")
                writer.integer(size)
            }
            writer.raw("}")
        }
        writer.key("version")
        writer.integer(Self.version)
        writer.raw("}\n")
        try POSIX.makeDirectory(layout.contentRecords)
        try AtomicFile.write(Data(writer.bytes), to: layout.contentRecord(assetID), durable: false)
    }

    /// Reads an asset's record: nil when there is none.
    /// - Throws: `.manifestUnreadable` naming the file when it is damaged.
    package static func read(assetID: String, layout: LibraryLayout) throws -> ContentRecord? {
        let path = layout.contentRecord(assetID)
        guard let data = try AtomicFile.read(path) else { return nil }
        do {
            let value = try data.withUnsafeBytes { try JSONReader.parse($0.bindMemory(to: UInt8.self)) }
            guard case .object(let object) = value else { throw CatalogShapeError("not an object") }
            if case .integer(let version)? = object["version"], version > Self.version {
                throw CatalogShapeError("version \(version) is newer than this issues understands")
            }
            var entries: [PlacedEntry] = []
            for (index, item) in try object.array("entries", at: "").enumerated() {
                guard case .object(let entry) = item else {
                    throw CatalogShapeError("entries[\(index)] is not an object")
                }
                let kindText = try entry.string("kind", at: "entries[\(index)]")
                guard let kind = PlacedEntry.Kind(rawValue: kindText) else {
                    throw CatalogShapeError("entries[\(index)].kind \(kindText.debugDescription) is unknown")
                }
                entries.append(
                    PlacedEntry(
                        path: try entry.string("path", at: "entries[\(index)]"), kind: kind,
                        size: try entry.optionalSize("size", at: "entries[\(index)]")))
            }
            return ContentRecord(assetID: try object.string("asset", at: ""), entries: entries)
        } catch {
            throw NewsstandError(
                .manifestUnreadable, "\(path) is not a valid content record (\(error)); run `issues verify --repair`",
                underlying: error)
        }
    }
}
