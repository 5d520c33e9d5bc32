internal import CLibArchive
internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
import NewsstandCore

extension ArchiveExtractor {
    /// Tells whether the file holds an archive, judged by its content (magic bytes), never by its name.
    ///
    /// The formats a magic number identifies count (zip, tar, 7z, rar, cpio, iso9660, xar, cab, lha, ar,
    /// compressed or not; see ``ArchiveReader/allowedFormatCodes``). A plain file — a PDF, text of any shape
    /// (CSV, a playlist, a URL list, JSON, base64 lines), random bytes, an empty file — is not an archive, and
    /// neither is a lone gzip or xz stream of a file that is not itself an archive: libarchive's magic-less
    /// `mtree`, `raw` and `empty` formats are never enabled. A recognised but damaged archive still counts
    /// (extracting it then fails with `.corrupt`), except in a format whose magic is two bytes (binary cpio):
    /// one random file in 32,768 starts with them, so such a file counts only when its first entry is a known kind
    /// of file no larger than the whole file (the bench's 2,000 random 64 KiB files held one, and its download
    /// failed as a damaged archive).
    ///
    /// Blocking: reads the start of the file (and, for ZIP and 7z, its end). Safe from any thread.
    ///
    /// - Parameter path: The file to inspect.
    /// - Returns: `true` when libarchive recognises an archive format; `false` otherwise, also when the file cannot
    ///   be read.
    package static func isArchive(at path: String) -> Bool {
        let reader: ArchiveReader
        do {
            reader = try ArchiveReader(path: path)
        } catch {
            return false  // Unreadable or no format recognised: either way, not an archive we can unpack.
        }
        var first: (fileType: UInt32, size: Int64?)?
        do {
            if let entry = try reader.nextEntry() { first = (entry.fileType, entry.declaredSize) }
        } catch {
            // A damaged first header: the format was still recognised by content, which is the question here.
        }
        let code = reader.formatCode
        guard isRealArchiveFormat(code) else { return false }
        guard code == ARCHIVE_FORMAT_CPIO_BIN_LE || code == ARCHIVE_FORMAT_CPIO_BIN_BE else { return true }
        guard let first, knownFileTypes.contains(first.fileType & 0o170000), let size = first.size, size >= 0,
            let fileSize = POSIX.fileSize(path), size <= fileSize
        else { return false }
        return true
    }

    /// Regular file, directory, symbolic link, character and block device, FIFO, socket (`AE_IF…`).
    private static let knownFileTypes: Set<UInt32> = [
        0o100000, 0o040000, 0o120000, 0o020000, 0o060000, 0o010000, 0o140000,
    ]

    /// Whether a libarchive format code names one of the allowed formats (checked again here, so that
    /// enabling one more reader never makes a text file an archive by accident).
    private static func isRealArchiveFormat(_ code: Int32) -> Bool {
        ArchiveReader.allowedFormatCodes.contains(code & ARCHIVE_FORMAT_BASE_MASK)
    }
}
