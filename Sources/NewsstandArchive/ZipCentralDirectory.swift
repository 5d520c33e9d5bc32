import NewsstandCore
#if canImport(Glibc)
    import Glibc
#endif

/// What a ZIP's central directory declares, known before a byte is extracted: the total uncompressed
/// size (the free-space check before unpacking) and the entries (whether they can be unpacked by several
/// workers at once). Reads the file's tail and the central directory only. Blocking.
package enum ZipCentralDirectory {
    /// One entry as the central directory lists it.
    struct Entry {
        /// The name as stored (bytes; not necessarily UTF-8).
        var name: [UInt8]
        var uncompressedSize: Int64
        /// A Unix symbolic link (made on Unix, with `S_IFLNK` in the external attributes).
        var isSymlink: Bool
        /// General purpose flag bit 0.
        var isEncrypted: Bool
    }

    /// The sum of the entries' uncompressed sizes, or nil when the file is not a ZIP this reader
    /// understands (no end record, a ZIP64 archive, a directory that does not parse): the caller then
    /// falls back to another bound.
    package static func uncompressedSize(path: String) -> Int64? {
        entries(path: path).map { $0.reduce(0) { $0.saturatingAdd($1.uncompressedSize) } }
    }

    /// The entries the central directory lists, in its order, or nil as for ``uncompressedSize(path:)``.
    static func entries(path: String) -> [Entry]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 22 else { return nil }
        let tailSize = Int(min(Int64(size), 22 + 0xFFFF))
        guard let tail = read(fd, count: tailSize, at: Int64(size) - Int64(tailSize)) else { return nil }
        var position = tail.count - 22
        while position >= 0 {
            if tail[position] == 0x50, tail[position + 1] == 0x4B, tail[position + 2] == 0x05,
                tail[position + 3] == 0x06,
                position + 22 + Int(le16(tail, position + 20)) == tail.count
            {
                break
            }
            position -= 1
        }
        guard position >= 0 else { return nil }
        let count = Int(le16(tail, position + 10))
        let directorySize = Int64(le32(tail, position + 12))
        let recordOffset = Int64(size) - Int64(tailSize) + Int64(position)
        // ZIP64 (sizes or counts that do not fit the classic record): not read here.
        guard count != 0xFFFF, directorySize != 0xFFFF_FFFF, directorySize <= recordOffset,
            directorySize <= 256 << 20,
            let directory = read(fd, count: Int(directorySize), at: recordOffset - directorySize)
        else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var at = 0
        for _ in 0..<count {
            guard at + 46 <= directory.count, le32(directory, at) == 0x0201_4B50 else { return nil }
            let uncompressed = le32(directory, at + 24)
            guard uncompressed != 0xFFFF_FFFF else { return nil }
            let nameLength = Int(le16(directory, at + 28))
            guard at + 46 + nameLength <= directory.count else { return nil }
            let madeOnUnix = directory[at + 5] == 3
            let mode = le32(directory, at + 38) >> 16
            entries.append(
                Entry(
                    name: Array(directory[(at + 46)..<(at + 46 + nameLength)]),
                    uncompressedSize: Int64(uncompressed),
                    isSymlink: madeOnUnix && mode & 0o170000 == 0o120000,
                    isEncrypted: le16(directory, at + 8) & 1 != 0))
            at += 46 + nameLength + Int(le16(directory, at + 30)) + Int(le16(directory, at + 32))
        }
        return entries
    }

    private static func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    private static func read(_ fd: Int32, count: Int, at offset: Int64) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        let filled = buffer.withUnsafeMutableBytes { POSIX.readFully(fd, into: $0, at: offset) }
        return filled == count ? buffer : nil
    }
}
