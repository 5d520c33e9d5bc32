import Foundation
import NewsstandCore

/// How one asset is fetched in byte ranges over several connections (`--segments N`), and how far each
/// range has come. Saved in the asset's resume record, so that a `kill -9` resumes every range where its
/// bytes end. Pure: the transfer (``DownloadEngine/fetchSegmented(_:progress:)``) does the I/O.
struct SegmentPlan: Codable, Sendable, Hashable {
    /// One byte range `[start, end)`; `next` is the first byte not yet on disk.
    struct Segment: Codable, Sendable, Hashable {
        var start: Int64
        var end: Int64
        var next: Int64

        var isDone: Bool { next >= end }
        /// The `Range` header value for what is left: `bytes=next-(end-1)`.
        var rangeHeader: String { "bytes=\(next)-\(end - 1)" }
    }

    /// The full size of the resource, from the first response's `Content-Range`.
    var total: Int64
    /// The `If-Range` validator every range is sent with: the same version or nothing.
    var validator: String
    var segments: [Segment]
    /// The boot the plan was saved in (Linux's `boot_id`). Its cursors count bytes that reached the page
    /// cache, not the disk: a crash or `kill -9` keeps them, a power cut may not, so a plan from another
    /// boot is dropped and the download starts over.
    var bootID: String? = SegmentPlan.currentBootID

    /// Automatic segments: an asset of at least this size is split, into this many ranges at most.
    static let automaticThreshold: Int64 = 64 << 20
    static let automaticCount = 4

    /// The smallest range worth its own connection: below it the connection's start costs more than it saves.
    static let minimumSegment: Int64 = 4 << 20

    /// Splits `total` bytes into at most `count` ranges of at least ``minimumSegment`` each (so a small
    /// resource gets fewer, and one under twice the minimum gets one).
    init(total: Int64, validator: String, count: Int) {
        self.total = total
        self.validator = validator
        let n = Int64(max(1, min(count, Int(max(1, total / SegmentPlan.minimumSegment)))))
        let size = total / n
        segments = (0..<n).map { index in
            let start = index * size
            let end = index == n - 1 ? total : start + size
            return Segment(start: start, end: end, next: start)
        }
    }

    /// Counts the bytes `[0, bytes)` as on disk: each range's cursor moves to the end of that prefix.
    mutating func markReceived(upTo bytes: Int64) {
        for index in segments.indices {
            segments[index].next = min(segments[index].end, max(segments[index].start, bytes))
        }
    }

    /// This boot's identifier, or nil where the system has none.
    static let currentBootID: String? = {
        guard let data = try? AtomicFile.read("/proc/sys/kernel/random/boot_id") else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    /// Bytes on disk across every range.
    var received: Int64 { segments.reduce(0) { $0 + ($1.next - $1.start) } }

    var isComplete: Bool { segments.allSatisfy(\.isDone) }

    /// Whether the plan describes a file that can be resumed: ranges in order, contiguous, covering
    /// `[0, total)`, each cursor inside its range, and no cursor past the bytes the file can hold.
    func isConsistent(fileSize: Int64) -> Bool {
        guard total > 0, !validator.isEmpty, let first = segments.first, let last = segments.last,
            first.start == 0, last.end == total
        else { return false }
        for (a, b) in zip(segments, segments.dropFirst()) where a.end != b.start { return false }
        return segments.allSatisfy {
            $0.start < $0.end && $0.next >= $0.start && $0.next <= $0.end && ($0.next == $0.start || $0.next <= fileSize)
        }
    }

    /// Whether a 206's `Content-Range` is exactly the range asked for `segment`, of the same resource size.
    func accepts(_ range: ContentRange, for segment: Segment) -> Bool {
        range.start == segment.next && range.end == segment.end - 1 && range.total == total
    }

    /// Whether a response's validators are the plan's version: the same strong ETag, or (planned on a date)
    /// the same `Last-Modified`. A response that drops the validator it was planned on is not trusted.
    func matches(etag: String?, lastModified: String?) -> Bool {
        if validator.hasPrefix("\"") { return etag == validator }
        guard let lastModified else { return false }
        guard let a = HTTPDate.parse(validator), let b = HTTPDate.parse(lastModified) else {
            return lastModified == validator
        }
        return a == b
    }
}
