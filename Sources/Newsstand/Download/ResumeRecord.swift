import Foundation

/// What resuming a partial download needs, saved beside the partial file when a response starts.
///
/// The bytes-on-disk figure is deliberately absent: it is the partial file's own size, so a
/// `kill -9` between writes can never make the record lie.
struct ResumeRecord: Codable, Sendable, Hashable {
    var url: String
    var etag: String?
    var lastModified: String?
    var expectedBytes: Int64?
    var contentDisposition: String?
    /// The name the finished file is being moved to in the content folder (set just before the move).
    var placedAs: String?
    /// The ranges of a segmented download and how far each has come. With a plan the partial file has
    /// holes, so its size says nothing: only the plan does.
    var segments: SegmentPlan?

    init(
        url: String, etag: String? = nil, lastModified: String? = nil, expectedBytes: Int64? = nil,
        contentDisposition: String? = nil
    ) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.expectedBytes = expectedBytes
        self.contentDisposition = contentDisposition
    }

    /// The validator for `If-Range`: a strong ETag, else `Last-Modified` (weak ETags are not allowed there).
    var ifRangeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// A missing or unreadable record means "cannot resume": the download then starts from zero, which
    /// is always safe, so errors are deliberately dropped here.
    static func load(_ path: String) -> ResumeRecord? {
        guard let data = try? AtomicFile.read(path) else { return nil }
        return try? JSONDecoder().decode(ResumeRecord.self, from: data)
    }

    /// Saves atomically but without fsync: losing a record to a power cut only means that download
    /// restarts from zero (bytes are never appended without a validator), which is always safe.
    func save(_ path: String) throws {
        try AtomicFile.write(try JSONEncoder().encode(self), to: path, durable: false)
    }
}
