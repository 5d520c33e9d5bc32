internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import Foundation

/// Single entries of an archive kept whole, read without unpacking it: a cover from an EPUB or comic book
/// that was downloaded with `--no-unpack`. Reads are bounded: the list by a count, an entry by its size.
package enum ArchiveEntryFile {
    /// The paths of the archive's regular files, in archive order (at most `limit`).
    /// - Throws: ``ArchiveError`` for a damaged or unreadable archive.
    package static func paths(in archive: String, limit: Int = 100_000) throws -> [String] {
        let reader = try ArchiveReader(path: archive)
        var paths: [String] = []
        while paths.count < limit, let entry = try reader.nextEntry() {
            guard entry.fileType == UInt32(CLIBARCHIVE_AE_IFREG), let bytes = entry.pathnameBytes else { continue }
            paths.append(String(decoding: bytes, as: UTF8.self))
        }
        return paths
    }

    /// The bytes of the entry at `entryPath`, or nil when there is none.
    /// - Throws: ``ArchiveError`` for a damaged archive, or `TooLarge` when the entry holds more than `maxBytes`.
    package static func read(_ entryPath: String, in archive: String, maxBytes: Int) throws -> Data? {
        let reader = try ArchiveReader(path: archive)
        while let entry = try reader.nextEntry() {
            guard let bytes = entry.pathnameBytes, String(decoding: bytes, as: UTF8.self) == entryPath else { continue }
            var data = Data()
            while let block = try reader.readDataBlock(entryPath: entryPath) {
                // Offsets may jump over holes of sparse entries: the hole's bytes are zeros.
                let end = Int(block.offset) + block.bytes.count
                guard block.offset >= 0, end <= maxBytes else { throw TooLarge(entryPath: entryPath, limit: maxBytes) }
                if data.count < Int(block.offset) { data.append(Data(count: Int(block.offset) - data.count)) }
                data.append(contentsOf: block.bytes)
            }
            return data
        }
        return nil
    }

    /// An entry larger than the reader's limit.
    package struct TooLarge: Error, CustomStringConvertible {
        package var entryPath: String
        package var limit: Int
        package var description: String { "\(entryPath) is larger than \(limit) bytes" }
    }
}
