internal import CSystemShims  // lseek(SEEK_HOLE), `struct stat`
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where each range of a resumed plan really ends on disk. The record is saved about once per MiB per
/// range (saving on every write slowed fast downloads), so after a `kill -9` the bytes a range wrote since
/// its last save are in the partial file but not in the plan; they are found here instead of fetched again.
extension SegmentPlan {
    /// How far back from a candidate end the last written byte is looked for.
    static let diskScanWindow = 256 << 10

    /// The plan with each unfinished range's cursor moved to the end of the bytes its transfers wrote.
    ///
    /// Sound because of how a plan's file is written: only a range's own transfers write inside it, one
    /// buffer after another from its cursor, so its written bytes are a prefix `[next, X)` and everything
    /// after `X` up to the range's end was never written and reads as zeros (a plan starts on an empty
    /// file, or on one of exactly the bytes it keeps; a plan dropped empties the file). So the last
    /// non-zero byte before the range's end is at most `X`. `SEEK_HOLE` only finds where to look: on a
    /// file system without holes it reports the end of the file, the bytes before it are zeros, and the
    /// cursor stays where the record put it. Zeros that really end a range's bytes are fetched again.
    /// The plan must be of this boot (``bootID``): after a power cut the page cache, not the plan, is lost.
    ///
    /// Blocking: reads at most ``diskScanWindow`` bytes per range.
    /// - Returns: The plan, unchanged when the file cannot be read.
    func advancedToBytesOnDisk(in path: String) -> SegmentPlan {
        guard let fd = try? POSIX.openIfExists(path, O_RDONLY | O_NOFOLLOW) else { return self }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return self }
        let fileSize = Int64(info.st_size)
        var plan = self
        var buffer = [UInt8](repeating: 0, count: SegmentPlan.diskScanWindow)
        for index in plan.segments.indices where !plan.segments[index].isDone {
            let segment = plan.segments[index]
            guard segment.next < fileSize else { continue }
            // ENXIO (past the end) cannot happen here; any other failure: look up to the end of the file.
            let hole = POSIX.retrying { newsstand_seek_hole(fd, segment.next) }
            let limit = min(segment.end, fileSize, hole >= 0 ? hole : fileSize)
            guard limit > segment.next else { continue }
            let from = max(segment.next, limit - Int64(buffer.count))
            let wanted = Int(limit - from)
            let read = buffer.withUnsafeMutableBytes {
                POSIX.readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted]), at: from)
            }
            guard read == wanted, let last = buffer[0..<wanted].lastIndex(where: { $0 != 0 }) else { continue }
            plan.segments[index].next = from + Int64(last) + 1
        }
        return plan
    }
}
