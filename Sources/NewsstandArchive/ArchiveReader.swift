internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import Glibc

/// A libarchive read handle (`struct archive *`) open on one archive file.
///
/// The handle is created, configured and opened in `init` and freed in `deinit`; it never leaves this class.
/// Every return code goes through ``checkLibArchive(_:handle:kind:operation:entryPath:archivePath:)``:
/// `ARCHIVE_WARN` is collected in ``warnings``, worse codes throw ``ArchiveError`` of kind `.corrupt`.
///
/// Not `Sendable`: a libarchive handle must not be used from two threads, and the extractor keeps the reader on
/// the one thread that runs the extraction. Blocking: every method reads the file.
final class ArchiveReader {
    /// Bytes libarchive reads from the file at a time. 256 KiB: large enough that reading is never the
    /// bottleneck, small enough to keep memory flat.
    static let defaultBlockSize = 256 * 1024

    private let handle: OpaquePointer
    /// The archive file, as given to `init`.
    let archivePath: String
    /// `ARCHIVE_WARN` messages collected so far, each naming the entry concerned when there is one.
    private(set) var warnings = WarningList()

    /// Opens `path` for reading with every compression filter and the archive formats of ``enableFormats()``:
    /// only formats that a magic number identifies, so that a lone compressed file or a plain file (a CSV, a
    /// playlist, a list of URLs, which libarchive's `mtree` reader would take for a file list) is *not* taken
    /// for an archive.
    ///
    /// The corresponding C functions are `archive_read_new`, `archive_read_support_filter_all`,
    /// `archive_read_support_format_*` (see ``enableFormats()``) and `archive_read_open_filename`.
    ///
    /// - Parameters:
    ///   - path: The archive file.
    ///   - blockSize: Bytes read from the file at a time.
    /// - Throws: ``ArchiveError``: `.io` when the file cannot be opened or read, `.notAnArchive` when no format
    ///   recognises it, `.corrupt` for other libarchive failures.
    init(path: String, blockSize: Int = ArchiveReader.defaultBlockSize) throws(ArchiveError) {
        guard let handle = archive_read_new() else {
            throw ArchiveError(kind: .io, message: "archive_read_new failed: out of memory", archivePath: path)
        }
        self.handle = handle
        self.archivePath = path
        // From here on `deinit` frees the handle, also when this initializer throws.
        try check(archive_read_support_filter_all(handle), "archive_read_support_filter_all")
        try enableFormats()
        do {
            try check(archive_read_open_filename(handle, path, blockSize), "archive_read_open_filename")
        } catch var error {
            // Opening also picks the filters and the format by content, reading the start of the data. libarchive
            // reports "Unrecognized archive format" with ARCHIVE_ERRNO_FILE_FORMAT (EILSEQ on Linux); another
            // system errno means the file itself could not be read; anything else (say "truncated gzip input")
            // is damage found while decompressing the start.
            switch error.libarchiveErrno {
            case EILSEQ?: error.kind = .notAnArchive
            case let code? where code > 0: error.kind = .io
            default: break
            }
            throw error
        }
    }

    deinit {
        archive_read_free(handle)
    }

    /// Enables the archive formats that start with (or, for ZIP, end with) a magic number or a checksummed
    /// header: an allow-list, not `archive_read_support_format_all`, because that also enables the `mtree`
    /// reader, which has no magic and takes any text whose lines look like paths (a CSV, an `.m3u`, a URL list,
    /// JSON, base64) for a list of files to create. `raw`, `empty` and `warc` stay off as well: none is an
    /// archive of an issue's files. The format codes these produce are ``allowedFormatCodes``.
    ///
    /// The corresponding C functions are `archive_read_support_format_zip` (streamable and seekable), `_tar`
    /// (with gnutar), `_7zip`, `_rar`, `_rar5`, `_cpio`, `_iso9660`, `_xar`, `_cab`, `_lha` and `_ar`.
    private func enableFormats() throws(ArchiveError) {
        try check(archive_read_support_format_zip(handle), "archive_read_support_format_zip")
        try check(archive_read_support_format_tar(handle), "archive_read_support_format_tar")
        try check(archive_read_support_format_gnutar(handle), "archive_read_support_format_gnutar")
        try check(archive_read_support_format_7zip(handle), "archive_read_support_format_7zip")
        try check(archive_read_support_format_rar(handle), "archive_read_support_format_rar")
        try check(archive_read_support_format_rar5(handle), "archive_read_support_format_rar5")
        try check(archive_read_support_format_cpio(handle), "archive_read_support_format_cpio")
        try check(archive_read_support_format_iso9660(handle), "archive_read_support_format_iso9660")
        try check(archive_read_support_format_xar(handle), "archive_read_support_format_xar")
        try check(archive_read_support_format_cab(handle), "archive_read_support_format_cab")
        try check(archive_read_support_format_lha(handle), "archive_read_support_format_lha")
        try check(archive_read_support_format_ar(handle), "archive_read_support_format_ar")
    }

    /// The base format codes (`code & ARCHIVE_FORMAT_BASE_MASK`) of the formats ``enableFormats()``
    /// enables: what counts as an archive.
    static let allowedFormatCodes: Set<Int32> = [
        ARCHIVE_FORMAT_ZIP, ARCHIVE_FORMAT_TAR, ARCHIVE_FORMAT_7ZIP, ARCHIVE_FORMAT_RAR, ARCHIVE_FORMAT_RAR_V5,
        ARCHIVE_FORMAT_CPIO, ARCHIVE_FORMAT_ISO9660, ARCHIVE_FORMAT_XAR, ARCHIVE_FORMAT_CAB, ARCHIVE_FORMAT_LHA,
        ARCHIVE_FORMAT_AR,
    ]

    /// Reads the next entry header, or returns `nil` at the end of the archive.
    ///
    /// The corresponding C function is `archive_read_next_header`. Any data of the previous entry that was not
    /// read is skipped.
    ///
    /// - Returns: A view of the header, valid only until the next call on this reader.
    /// - Throws: ``ArchiveError`` `.corrupt` with libarchive's words (also for `ARCHIVE_RETRY`: a damaged header is
    ///   never skipped silently).
    func nextEntry() throws(ArchiveError) -> ArchiveEntryHeader? {
        var entry: OpaquePointer?
        let status = try check(archive_read_next_header(handle, &entry), "archive_read_next_header")
        if status == ARCHIVE_EOF {
            return nil
        }
        guard let entry else {
            throw ArchiveError(
                kind: .corrupt,
                message: "archive_read_next_header returned no entry",
                archivePath: archivePath
            )
        }
        return ArchiveEntryHeader(pointer: entry)
    }

    /// Reads the next block of the current entry's data, or returns `nil` at the end of the entry.
    ///
    /// The corresponding C function is `archive_read_data_block`. The bytes are libarchive's own buffer, valid
    /// only until the next call on this reader; nothing is copied.
    ///
    /// - Parameter entryPath: The current entry, for error messages.
    /// Unlike elsewhere, `ARCHIVE_WARN` is a failure here: libarchive reports a ZIP entry whose CRC-32 or size
    /// does not match as a mere warning ("ZIP bad CRC", "ZIP uncompressed data is wrong size") after handing out
    /// all of its data, and silently keeping damaged content is wrong for a downloader.
    ///
    /// - Returns: The bytes and their offset in the entry (offsets can jump over holes in sparse entries).
    /// - Throws: ``ArchiveError`` `.corrupt` with libarchive's words, e.g. for a truncated file or a bad checksum.
    func readDataBlock(entryPath: String) throws(ArchiveError) -> (bytes: UnsafeRawBufferPointer, offset: Int64)? {
        var buffer: UnsafeRawPointer?
        var size = 0
        var offset: Int64 = 0
        let status = try check(
            archive_read_data_block(handle, &buffer, &size, &offset),
            "archive_read_data_block",
            entryPath: entryPath,
            warningIsFailure: true
        )
        if status == ARCHIVE_EOF {
            return nil
        }
        return (UnsafeRawBufferPointer(start: size > 0 ? buffer : nil, count: size), offset)
    }

    /// The archive format found, such as `ARCHIVE_FORMAT_ZIP`; 0 before the first header has been read.
    ///
    /// The corresponding C function is `archive_format`.
    var formatCode: Int32 {
        archive_format(handle)
    }

    /// A human-readable name of the archive format found, such as `ZIP 2.0 (deflation)`.
    ///
    /// The corresponding C function is `archive_format_name`.
    var formatName: String {
        archive_format_name(handle).map { String(cString: $0) } ?? "unknown"
    }

    /// Whether libarchive has seen encrypted entries (or an encrypted header) so far.
    ///
    /// The corresponding C function is `archive_read_has_encrypted_entries`.
    var hasEncryptedEntries: Bool {
        archive_read_has_encrypted_entries(handle) > 0
    }

    /// Routes a return code through ``checkLibArchive(_:handle:kind:operation:entryPath:archivePath:)``,
    /// collecting warnings, or throwing them when `warningIsFailure`.
    @discardableResult
    private func check<Value: FixedWidthInteger>(
        _ code: Value,
        _ operation: StaticString,
        entryPath: String? = nil,
        warningIsFailure: Bool = false
    ) throws(ArchiveError) -> Value {
        let result = try checkLibArchive(
            code,
            handle: handle,
            kind: .corrupt,
            operation: operation,
            entryPath: entryPath,
            archivePath: archivePath
        )
        if let warning = result.warning {
            guard !warningIsFailure else {
                throw ArchiveError(
                    kind: .corrupt,
                    message: warning,
                    entryPath: entryPath,
                    archivePath: archivePath,
                    libarchiveStatus: ARCHIVE_WARN,
                    libarchiveErrno: archive_errno(handle)
                )
            }
            warnings.append(warning, entryPath: entryPath)
        }
        return result.value
    }
}

/// A borrowed view of the `struct archive_entry` a reader has just read.
///
/// Valid only until the next call on the reader that produced it: never store it. The setters change the entry in
/// place before it is handed to ``ArchiveWriter/writeHeader(_:entryPath:)``.
struct ArchiveEntryHeader {
    /// The `struct archive_entry *`, owned by the reader.
    let pointer: OpaquePointer

    /// The path as stored (converted to the thread's locale, UTF-8 during extraction), or `nil` when libarchive
    /// could not convert it. The corresponding C functions are `archive_entry_pathname` and, as a fallback,
    /// `archive_entry_pathname_utf8`.
    var pathnameBytes: [UInt8]? {
        (archive_entry_pathname(pointer) ?? archive_entry_pathname_utf8(pointer)).map(Self.bytes)
    }

    /// The file type bits (`AE_IFREG`, `AE_IFDIR`, …; 0 when the archive does not say).
    /// The corresponding C function is `archive_entry_filetype`.
    var fileType: UInt32 {
        UInt32(archive_entry_filetype(pointer))
    }

    /// The permission bits, including setuid, setgid and sticky. The corresponding C function is
    /// `archive_entry_perm`.
    var permissions: UInt32 {
        UInt32(archive_entry_perm(pointer))
    }

    /// The size the header declares, or `nil` when the format does not record it up front.
    /// The corresponding C functions are `archive_entry_size_is_set` and `archive_entry_size`.
    var declaredSize: Int64? {
        archive_entry_size_is_set(pointer) != 0 ? archive_entry_size(pointer) : nil
    }

    /// The path this entry is a hard link to, if it is one. The corresponding C function is
    /// `archive_entry_hardlink`.
    var hardlinkBytes: [UInt8]? {
        archive_entry_hardlink(pointer).map(Self.bytes)
    }

    /// The target of this entry if it is a symbolic link. The corresponding C function is `archive_entry_symlink`.
    var symlinkBytes: [UInt8]? {
        archive_entry_symlink(pointer).map(Self.bytes)
    }

    /// Whether the entry's data or metadata is encrypted. The corresponding C functions are
    /// `archive_entry_is_encrypted`, `archive_entry_is_data_encrypted` and `archive_entry_is_metadata_encrypted`.
    var isEncrypted: Bool {
        archive_entry_is_encrypted(pointer) != 0 || archive_entry_is_data_encrypted(pointer) != 0
            || archive_entry_is_metadata_encrypted(pointer) != 0
    }

    /// Replaces the path. The corresponding C function is `archive_entry_set_pathname`.
    func setPathname(_ bytes: [UInt8]) {
        archive_entry_set_pathname(pointer, Self.cString(bytes))
    }

    /// Replaces the hard-link target. The corresponding C function is `archive_entry_set_hardlink`.
    func setHardlink(_ bytes: [UInt8]) {
        archive_entry_set_hardlink(pointer, Self.cString(bytes))
    }

    /// Replaces the permission bits. The corresponding C function is `archive_entry_set_perm`.
    func setPermissions(_ permissions: UInt32) {
        archive_entry_set_perm(pointer, mode_t(permissions))
    }

    /// Replaces the file type bits. The corresponding C function is `archive_entry_set_filetype`.
    func setFileType(_ fileType: UInt32) {
        archive_entry_set_filetype(pointer, fileType)
    }

    private static func bytes(_ cString: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: cString, count: strlen(cString))).map { UInt8(bitPattern: $0) }
    }

    /// The bytes and a terminating NUL, for Swift's array-to-pointer conversion.
    private static func cString(_ bytes: [UInt8]) -> [CChar] {
        bytes.map { CChar(bitPattern: $0) } + [0]
    }
}

/// Warnings collected from libarchive, capped so that an archive provoking one warning per data block cannot grow
/// memory without bound.
struct WarningList: Sendable, Hashable {
    /// At most this many messages are kept; the rest are only counted.
    static let capacity = 100

    /// The kept messages, oldest first.
    private(set) var messages: [String] = []
    /// How many messages were dropped after ``capacity`` was reached.
    private(set) var dropped = 0

    /// Adds a warning, prefixed with the entry path when there is one.
    mutating func append(_ message: String, entryPath: String?) {
        guard messages.count < Self.capacity else {
            dropped += 1
            return
        }
        messages.append(entryPath.map { "\(ArchiveError.displayable($0)): \(message)" } ?? message)
    }

    /// Adds every warning of `other`.
    mutating func append(contentsOf other: WarningList) {
        for message in other.messages {
            append(message, entryPath: nil)
        }
        dropped += other.dropped
    }

    /// The kept messages, followed by a count of the dropped ones when there are any.
    var summary: [String] {
        dropped == 0 ? messages : messages + ["… and \(dropped) more warnings"]
    }
}
