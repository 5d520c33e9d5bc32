internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import Glibc
import NewsstandCore

/// A libarchive disk writer (`archive_write_disk_new`) that creates the entries it is given on disk.
///
/// The handle is created and configured in `init` and freed in `deinit` with `archive_write_free`, which also runs
/// libarchive's deferred directory fixups (final permissions and times) if ``close()`` was not called. Those
/// fixups use the paths the entries were written with, so the writer must be released on the thread — and with
/// the working directory — it wrote with; ``ArchiveExtractor`` keeps it local to its extraction thread.
///
/// Every return code goes through ``checkLibArchive(_:handle:kind:operation:entryPath:archivePath:)``:
/// `ARCHIVE_WARN` is collected in ``warnings``, worse codes throw ``ArchiveError``. Not `Sendable`. Blocking.
final class ArchiveWriter {
    private let handle: OpaquePointer
    /// The archive being extracted, for error messages.
    let archivePath: String?
    /// `ARCHIVE_WARN` messages collected so far, each naming the entry concerned.
    private(set) var warnings = WarningList()

    /// Creates a disk writer with the given `ARCHIVE_EXTRACT_*` options.
    ///
    /// The corresponding C functions are `archive_write_disk_new` and `archive_write_disk_set_options`. Note that
    /// libarchive reads the process umask here and in every ``writeHeader(_:entryPath:)`` by calling `umask(0)`
    /// and restoring it, which is why the extractor runs it on a thread with its own umask (`unshare(CLONE_FS)`).
    ///
    /// - Parameters:
    ///   - options: A bitwise OR of `ARCHIVE_EXTRACT_*` flags.
    ///   - archivePath: The archive being extracted, for error messages.
    /// - Throws: ``ArchiveError`` `.io` when libarchive cannot allocate or configure the writer.
    init(options: Int32, archivePath: String?) throws(ArchiveError) {
        guard let handle = archive_write_disk_new() else {
            throw ArchiveError(
                kind: .io, message: "archive_write_disk_new failed: out of memory", archivePath: archivePath)
        }
        self.handle = handle
        self.archivePath = archivePath
        try check(archive_write_disk_set_options(handle, options), "archive_write_disk_set_options")
    }

    deinit {
        archive_write_free(handle)
    }

    /// Creates the entry's file, directory or link on disk (data follows with ``writeDataBlock(_:offset:entryPath:)``).
    ///
    /// The corresponding C function is `archive_write_header`.
    ///
    /// - Parameters:
    ///   - header: The entry, with its path already made safe by the caller.
    ///   - entryPath: The entry's path as stored in the archive, for error messages.
    /// - Throws: ``ArchiveError``: `.unsafeEntry` when libarchive's own secure-extraction checks refuse the entry
    ///   (those failures carry no system errno), `.io` when creating it fails.
    func writeHeader(_ header: ArchiveEntryHeader, entryPath: String) throws(ArchiveError) {
        do {
            try check(archive_write_header(handle, header.pointer), "archive_write_header", entryPath: entryPath)
        } catch var error {
            // libarchive reports its security refusals ("Path contains '..'", "Cannot extract through symlink",
            // "Path is absolute") with ARCHIVE_ERRNO_MISC (-1) or 0 instead of a system errno.
            if let errno = error.libarchiveErrno, errno <= 0 {
                error.kind = .unsafeEntry
            }
            throw error
        }
    }

    /// Writes one block of the current entry's data at `offset`.
    ///
    /// The corresponding C function is `archive_write_data_block`.
    ///
    /// - Parameters:
    ///   - bytes: The data.
    ///   - offset: Where it goes in the file (a gap leaves a hole).
    ///   - entryPath: The entry's path as stored in the archive, for error messages.
    /// - Throws: ``ArchiveError`` `.insufficientSpace` when the disk or quota is full, `.io` for any other failed
    ///   or short write. libarchive reports a failed `write(2)` and a truncated block only as `ARCHIVE_WARN`;
    ///   carrying on would leave a file with holes in the issue, so here a warning is a failure.
    func writeDataBlock(_ bytes: UnsafeRawBufferPointer, offset: Int64, entryPath: String) throws(ArchiveError) {
        let code = try check(
            archive_write_data_block(handle, bytes.baseAddress, bytes.count, offset),
            "archive_write_data_block",
            entryPath: entryPath,
            warningIsFailure: true
        )
        // A count is returned on success; one short of the block is a short write even without a warning.
        if code > 0 && code < bytes.count {
            throw ArchiveError(
                kind: .io,
                message: "short write: \(code) of \(bytes.count) bytes written",
                entryPath: entryPath,
                archivePath: archivePath
            )
        }
    }

    /// Completes the current entry: closes the file and applies its permissions and times.
    ///
    /// The corresponding C function is `archive_write_finish_entry`.
    ///
    /// - Parameter entryPath: The entry's path as stored in the archive, for error messages.
    /// - Throws: ``ArchiveError`` `.io`.
    func finishEntry(entryPath: String) throws(ArchiveError) {
        try check(archive_write_finish_entry(handle), "archive_write_finish_entry", entryPath: entryPath)
    }

    /// The errors that mean the data did not reach the disk, whatever status libarchive gave them.
    private static let lostDataErrnos: Set<Int32> = [ENOSPC, EDQUOT, EIO, EFBIG]

    /// Applies the deferred directory permissions and times, and closes the writer.
    ///
    /// The corresponding C function is `archive_write_close`.
    ///
    /// - Throws: ``ArchiveError`` `.io`.
    func close() throws(ArchiveError) {
        try check(archive_write_close(handle), "archive_write_close")
    }

    /// Routes a return code through ``checkLibArchive(_:handle:kind:operation:entryPath:archivePath:)``,
    /// collecting warnings.
    ///
    /// A warning whose errno says data was lost (disk full, quota, I/O error, file too large) is always a failure,
    /// and so is any warning when `warningIsFailure`; a full disk or quota becomes `.insufficientSpace`.
    @discardableResult
    private func check<Value: FixedWidthInteger>(
        _ code: Value,
        _ operation: StaticString,
        entryPath: String? = nil,
        warningIsFailure: Bool = false
    ) throws(ArchiveError) -> Value {
        let result: LibArchiveResult<Value>
        do {
            result = try checkLibArchive(
                code,
                handle: handle,
                kind: .io,
                operation: operation,
                entryPath: entryPath,
                archivePath: archivePath
            )
        } catch var error {
            if let errno = error.libarchiveErrno, errno == ENOSPC || errno == EDQUOT {
                error.kind = .insufficientSpace
                error.message = "the disk is full: " + error.message
            }
            throw error
        }
        if let warning = result.warning {
            let errno = archive_errno(handle)
            if warningIsFailure || Self.lostDataErrnos.contains(errno) {
                let full = errno == ENOSPC || errno == EDQUOT
                // Without an errno, libarchive's one data-write warning is "Too much data": the entry holds more
                // than its header declares (and libarchive would silently cut it), so the archive is corrupt.
                throw ArchiveError(
                    kind: full ? .insufficientSpace : errno > 0 ? .io : .corrupt,
                    message: full
                        ? "the disk is full: \(warning) (\(POSIX.describe(errno)))"
                        : errno > 0 ? "\(warning) (\(POSIX.describe(errno)))" : warning,
                    entryPath: entryPath,
                    archivePath: archivePath,
                    libarchiveStatus: ARCHIVE_WARN,
                    libarchiveErrno: errno
                )
            }
            warnings.append(warning, entryPath: entryPath)
        }
        return result.value
    }
}
