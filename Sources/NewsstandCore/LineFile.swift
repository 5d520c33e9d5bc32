#if canImport(Glibc)
    import Glibc
#endif

/// Walks the newline-terminated lines of a file from an open descriptor in chunks, so that memory follows the
/// longest line, not the file's size (the catalog's index and its event log grow past 100 MB).
package enum LineFile {
    /// Calls `body` with every complete line (without its newline) and the file offset where it starts, in
    /// file order. A last line without a newline is skipped: an append still under way, or one a power cut tore.
    /// - Returns: Whether the file ended in such a torn line.
    @discardableResult
    package static func forEachLine(
        _ fd: Int32, path: String, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1 << 22)
        var filled = 0
        var fileOffset = 0  // of buffer[0]
        while true {
            if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            let n = buffer.withUnsafeMutableBytes { raw in
                POSIX.retrying { pread(fd, raw.baseAddress.map { $0 + filled }, raw.count - filled, off_t(fileOffset + filled)) }
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
        guard from < to, let base = buffer.baseAddress, let found = memchr(base + from, 0x0A, to - from) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}
