#if canImport(Glibc)
    import Glibc
#endif

/// Walks the newline-terminated lines of a file from an open descriptor in chunks, so that memory follows the
/// longest line, not the file's size (the catalog's index and its event log grow past 100 MB).
package enum LineFile {
    /// Calls `body` with every complete line (without its newline) and the file offset where it starts, in
    /// file order. A last line without a newline is skipped: an append still under way, or one a power cut tore.
    /// - Parameters:
    ///   - start: Where to begin: the file's start or the start of a line.
    ///   - end: Where to stop reading (the file's end when nil): a snapshot of a file that writers append to.
    /// - Returns: Whether the file ended in such a torn line.
    @discardableResult
    package static func forEachLine(
        _ fd: Int32, path: String, from start: Int = 0, to end: Int? = nil,
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws -> Bool {
        // 4 MiB for a whole file; a short range (the lines appended since a view last read: a few kilobytes) gets
        // a buffer its size, not 4 MiB to zero each time. A longer line doubles the buffer below.
        var buffer = [UInt8](repeating: 0, count: min(1 << 22, max(1 << 12, (end ?? Int.max) - start)))
        var filled = 0
        var fileOffset = start  // of buffer[0]
        while true {
            if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            let room = min(buffer.count - filled, end.map { max(0, $0 - fileOffset - filled) } ?? Int.max)
            let n =
                room == 0
                ? 0
                : buffer.withUnsafeMutableBytes { raw in
                    POSIX.retrying { pread(fd, raw.baseAddress.map { $0 + filled }, room, off_t(fileOffset + filled)) }
                }
            if n < 0 { throw NewsstandError.posix(errno, "cannot read", path: path) }
            if n == 0 { return filled > 0 }
            filled += n
            var start = 0
            try buffer.withUnsafeBufferPointer { all in
                while let newline = newline(in: all, from: start, to: filled) {
                    try body(UnsafeBufferPointer(rebasing: all[start..<newline]), fileOffset + start)
                    start = newline + 1
                }
            }
            buffer.withUnsafeMutableBytes { raw in
                if start > 0, let base = raw.baseAddress { memmove(base, base + start, filled - start) }
            }
            filled -= start
            fileOffset += start
        }
    }

    private static func newline(in buffer: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let base = buffer.baseAddress, let found = memchr(base + from, 0x0A, to - from) else {
            return nil
        }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}
