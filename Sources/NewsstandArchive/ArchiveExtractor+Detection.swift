internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive

extension ArchiveExtractor {
    /// Tells whether the file holds an archive, judged by its content (magic bytes), never by its name.
    ///
    /// Any format libarchive reads counts (zip, tar, 7z, cpio, iso9660, rar, …, compressed or not). A plain file —
    /// a PDF, text, random bytes, an empty file — is not an archive, and neither is a lone gzip or xz stream of a
    /// file that is not itself an archive: libarchive's `raw` format is never enabled. A recognised but damaged
    /// archive still counts (extracting it then fails with `.corrupt`).
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

    /// Whether a libarchive format code names an archive rather than the `empty` or `raw` pseudo-formats.
    private static func isRealArchiveFormat(_ code: Int32) -> Bool {
        let base = code & ARCHIVE_FORMAT_BASE_MASK
        return base != 0 && base != ARCHIVE_FORMAT_EMPTY && base != ARCHIVE_FORMAT_RAW
    }
}
