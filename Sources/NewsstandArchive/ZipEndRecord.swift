internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Glibc
import NewsstandCore

/// Checks that a ZIP file ends with an end-of-central-directory record.
///
/// libarchive has two ZIP readers: a seekable one that starts from the central directory at the end of the file,
/// and a streaming one that walks the local headers from the front. A ZIP whose end was cut off has no
/// end-of-central-directory record, so libarchive falls back to the streaming reader, which reads every complete
/// entry and then stops *without an error* at the damaged central directory: a silent partial extraction.
/// Requiring the record (and a central directory where it says) turns that into `.corrupt`.
enum ZipEndRecord {
    private static let recordSize = 22
    private static let maxCommentSize = 0xFFFF

    /// - Throws: ``ArchiveError`` `.corrupt` when the record is missing or points at no central directory, `.io`
    ///   when the file cannot be read.
    static func verify(path: String, archivePath: String) throws(ArchiveError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ArchiveError.system(errno, "cannot open", archivePath: archivePath)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw ArchiveError.system(errno, "cannot stat", archivePath: archivePath)
        }
        let fileSize = Int64(info.st_size)
        let tailSize = Int(min(fileSize, Int64(recordSize + maxCommentSize)))
        let tailStart = fileSize - Int64(tailSize)
        let tail = try read(descriptor, count: tailSize, at: tailStart, archivePath: archivePath)

        // Scan backwards, as a comment may itself contain the signature; take the first candidate that holds up.
        var position = tail.count - recordSize
        while position >= 0 {
            if tail[position] == 0x50, tail[position + 1] == 0x4B, tail[position + 2] == 0x05,
                tail[position + 3] == 0x06,
                try isEndRecord(at: position, in: tail, tailStart: tailStart, descriptor, archivePath: archivePath)
            {
                return
            }
            position -= 1
        }
        throw ArchiveError(
            kind: .corrupt,
            message: "the ZIP end-of-central-directory record is missing: the file is truncated or damaged",
            archivePath: archivePath
        )
    }

    /// Whether the signature at `position` of the file's tail starts a genuine end record: its comment reaches
    /// exactly to the end of the file (the record is the last structure of a ZIP, so bytes after it mean damage;
    /// this also keeps the end record of a ZIP stored *inside* the archive from passing for the archive's own),
    /// and the central directory it describes is where it says (directly before it, or before the ZIP64 records).
    private static func isEndRecord(
        at position: Int,
        in tail: [UInt8],
        tailStart: Int64,
        _ descriptor: Int32,
        archivePath: String
    ) throws(ArchiveError) -> Bool {
        let commentSize = Int(tail[position + 20]) | Int(tail[position + 21]) << 8
        guard position + recordSize + commentSize == tail.count else {
            return false
        }
        let recordOffset = tailStart + Int64(position)
        if recordOffset >= 20,
            try read(descriptor, count: 4, at: recordOffset - 20, archivePath: archivePath) == [0x50, 0x4B, 0x06, 0x07]
        {
            return true  // ZIP64: the real sizes are in the ZIP64 record; libarchive's seekable reader checks it.
        }
        let directorySize = littleEndian32(tail, at: position + 12)
        let directoryOffset = littleEndian32(tail, at: position + 16)
        guard directorySize != 0xFFFF_FFFF, directoryOffset != 0xFFFF_FFFF, Int64(directorySize) <= recordOffset else {
            return false
        }
        // Measured back from the record rather than from the stored offset, which self-extracting archives
        // leave unadjusted.
        if directorySize == 0 {
            return true
        }
        let start = recordOffset - Int64(directorySize)
        return try read(descriptor, count: 4, at: start, archivePath: archivePath) == [0x50, 0x4B, 0x01, 0x02]
    }

    private static func littleEndian32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
            | UInt32(bytes[index + 3]) << 24
    }

    private static func read(_ descriptor: Int32, count: Int, at offset: Int64, archivePath: String)
        throws(ArchiveError) -> [UInt8]
    {
        var buffer = [UInt8](repeating: 0, count: count)
        let filled = buffer.withUnsafeMutableBytes { POSIX.readFully(descriptor, into: $0, at: offset) }
        guard filled >= 0 else { throw ArchiveError.system(errno, "cannot read", archivePath: archivePath) }
        return Array(buffer.prefix(filled))
    }
}
