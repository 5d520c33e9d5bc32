internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// What resuming a partial download needs, saved beside the partial file when a response starts.
///
/// The bytes-on-disk figure is deliberately absent: it is the partial file's own size, so a
/// `kill -9` between writes can never make the record lie.
package struct ResumeRecord: Codable, Sendable, Hashable {
    var url: String
    var etag: String?
    var lastModified: String?
    package var expectedBytes: Int64?
    var contentDisposition: String?
    /// The response's `Content-Type`: a filed issue's file takes its extension from it when the URL has none.
    var contentType: String?
    /// The name the finished file is being moved to in the content folder (set just before the move).
    var placedAs: String?
    /// The ranges of a segmented download and how far each has come. With a plan the partial file has
    /// holes, so its size says nothing: only the plan does.
    var segments: SegmentPlan?
    /// The asset whose record this is, written by ``save(_:)`` from the file's name and checked by
    /// ``load(_:)``: record files are reused from asset to asset (`RecordSpares`), and a power cut can keep a
    /// rename but lose the emptying before it, leaving another asset's record under this name.
    private var asset: String?

    init(
        url: String, etag: String? = nil, lastModified: String? = nil, expectedBytes: Int64? = nil,
        contentDisposition: String? = nil, contentType: String? = nil
    ) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.expectedBytes = expectedBytes
        self.contentDisposition = contentDisposition
        self.contentType = contentType
    }

    /// The validator for `If-Range`: a strong ETag, else `Last-Modified` (weak ETags are not allowed there).
    var ifRangeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// A missing or unreadable record means "cannot resume": the download then starts from zero, which
    /// is always safe, so errors are deliberately dropped here.
    package static func load(_ path: String) -> ResumeRecord? {
        guard let data = try? AtomicFile.read(path), var record = try? JSONDecoder().decode(ResumeRecord.self, from: data)
        else { return nil }
        // Records of earlier versions name no asset.
        if let asset = record.asset, asset != owner(of: path) { return nil }
        record.asset = nil
        return record
    }

    /// The asset a record file belongs to: its name up to the first dot (`<asset id>.resume.json`).
    private static func owner(of path: String) -> String {
        String((path as NSString).lastPathComponent.prefix { $0 != "." })
    }

    /// Saves without fsync: losing a record to a power cut only means that download restarts from zero
    /// (bytes are never appended without a validator), which is always safe.
    ///
    /// A record is written in place, created or rewritten, when old and new both fit in one page (one
    /// `pwrite`, which `kill -9` cannot split; the new text is padded with spaces over the old, which JSON
    /// allows): a temporary file renamed over it made a new inode for each save, two per asset, and on an
    /// ext4 without a journal each new inode is found by stepping over every one freed in the last seconds
    /// (in one profile of 200 × 5 MiB, inode allocation took a quarter of the machine's CPU). Otherwise, and
    /// when the write fails, it is replaced whole.
    func save(_ path: String) throws {
        var owned = self
        owned.asset = ResumeRecord.owner(of: path)
        let data = try JSONEncoder().encode(owned)
        if data.count <= ResumeRecord.inPlaceLimit, ResumeRecord.writeInPlace(path, data) { return }
        try AtomicFile.write(data, to: path, durable: false)
    }

    /// The most a record rewritten in place may hold, before and after: one page.
    static let inPlaceLimit = 4096

    /// Writes `data` into the regular file at `path`, creating it, padded with spaces to its old size.
    /// - Returns: false when the path is a link or another kind of file, the file is too large, or the
    ///   write failed (the file is then removed, so that a half-written record is never read).
    private static func writeInPlace(_ path: String, _ data: Data) -> Bool {
        // A link, another kind of file or a second name on it: such a record is replaced whole.
        guard let (fd, info) = POSIX.openSoleFile(path, O_RDWR | O_CREAT) else { return false }
        defer { _ = close(fd) }
        guard info.st_size <= inPlaceLimit else { return false }
        var bytes = [UInt8](data)
        if bytes.count < Int(info.st_size) { bytes += repeatElement(UInt8(ascii: " "), count: Int(info.st_size) - bytes.count) }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else {
            _ = unlink(path)
            return false
        }
        return true
    }
}
