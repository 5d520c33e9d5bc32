internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive

extension ArchiveExtractor {
    /// Tells whether the file holds an archive, judged by its content (magic bytes), never by its name.
    ///
    /// The formats a magic number identifies count (zip, tar, 7z, rar, cpio, iso9660, xar, cab, lha, ar,
    /// compressed or not; see ``ArchiveReader/allowedFormatCodes``). A plain file — a PDF, text of any shape
    /// (CSV, a playlist, a URL list, JSON, base64 lines), random bytes, an empty file — is not an archive, and
    /// neither is a lone gzip or xz stream of a file that is not itself an archive: libarchive's magic-less
    /// `mtree`, `raw` and `empty` formats are never enabled. A recognised but damaged archive still counts
    /// (extracting it then fails with `.corrupt`).
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
        do {
            _ = try reader.nextEntry()
        } catch {
            // A damaged first header: the format was still recognised by content, which is the question here.
        }
        return isRealArchiveFormat(reader.formatCode)
    }

    /// Whether a libarchive format code names one of the allowed formats (checked again here, so that
    /// enabling one more reader never makes a text file an archive by accident).
    private static func isRealArchiveFormat(_ code: Int32) -> Bool {
        ArchiveReader.allowedFormatCodes.contains(code & ARCHIVE_FORMAT_BASE_MASK)
    }
}
