internal import CLibArchive
import Glibc

/// Limits that stop archive bombs: an archive that would unpack to more bytes or more entries than this is refused
/// part-way, before the limit is passed.
public struct UnpackLimits: Sendable, Hashable, Codable {
    /// The most bytes of entry data one archive may unpack to (sparse holes count as data). Default 16 GiB.
    public var maxTotalBytes: Int64
    /// The most files, directories and links one archive may create, counting the folders created implicitly for
    /// entries whose parent folders the archive does not list (so that deep paths cannot create folders for
    /// free). Default 1,000,000.
    public var maxEntries: Int

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - maxTotalBytes: The most bytes of entry data one archive may unpack to.
    ///   - maxEntries: The most files, directories and links one archive may create.
    public init(maxTotalBytes: Int64 = 16 << 30, maxEntries: Int = 1_000_000) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
    }

    /// 16 GiB and 1,000,000 entries.
    public static let `default` = UnpackLimits()
}

/// What one extraction produced.
struct ExtractionSummary: Sendable, Hashable {
    /// Entries read from the archive (files, directories and links, including a skipped `./` root entry).
    var entries: Int
    /// Bytes of entry data written.
    var bytes: Int64
    /// libarchive's warnings (`ARCHIVE_WARN`), each naming its entry, plus notes from the extractor.
    var warnings: [String]
}

/// Unpacks archives safely, in any format libarchive reads, into an empty staging folder.
///
/// Every entry passes the checks of ``EntryPathPolicy`` and the entry-type rules below *before* libarchive sees
/// it, and libarchive's own secure extraction flags apply on top (see ``diskWriterOptions``):
/// - paths must be relative, free of `..` components and control characters;
/// - only regular files, directories and symbolic links are created; devices, FIFOs and sockets are refused;
/// - a symbolic link's target must stay inside the staging folder
///   (see ``EntryPathPolicy/checkSymlinkTarget(_:linkDepth:)``);
/// - a hard link must point at an earlier entry by a safe path, never at a symbolic link;
/// - nothing is written through a symbolic link;
/// - encrypted entries are refused;
/// - setuid, setgid and sticky bits are dropped, the umask applies, and the owner keeps the access needed to
///   move and delete what was extracted;
/// - ``UnpackLimits`` are enforced as data arrives.
struct ArchiveExtractor: Sendable {
    /// How entry paths are kept inside the staging folder.
    enum Confinement: Sendable, Hashable {
        /// Extract on a thread that has its own working directory (`unshare(CLONE_FS)`), `chdir` into the
        /// staging folder, and hand libarchive relative paths, so `ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS` can be
        /// set. Falls back to ``absolutePathPrefix`` when `unshare` fails.
        case threadWorkingDirectory
        /// Prefix every (already checked) entry path with the staging folder's real path. Then every path handed
        /// to libarchive is absolute, so `ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS` cannot be set and only this
        /// type's own absolute-path check applies; and libarchive's per-entry `umask(0)` dance briefly changes
        /// the process-wide umask. Used where `unshare` is not allowed (some seccomp profiles).
        case absolutePathPrefix
    }

    /// The limits enforced.
    var limits: UnpackLimits
    /// The preferred confinement; tests force ``Confinement/absolutePathPrefix`` to exercise the fallback.
    var confinement: Confinement

    /// Creates an extractor.
    ///
    /// - Parameters:
    ///   - limits: The limits enforced.
    ///   - confinement: The preferred confinement.
    init(limits: UnpackLimits = .default, confinement: Confinement = .threadWorkingDirectory) {
        self.limits = limits
        self.confinement = confinement
    }

    /// The `ARCHIVE_EXTRACT_*` options of the disk writer.
    ///
    /// - `SECURE_NODOTDOT`, `SECURE_SYMLINKS`: libarchive's own refusal of `..` and of writing through a symlink.
    /// - `SECURE_NOABSOLUTEPATHS`: only with ``Confinement/threadWorkingDirectory``, see there.
    /// - `TIME`: restore modification times. `PERM`: set exactly the (sanitised) permission bits.
    /// - Deliberately absent: `OWNER` (never chown to ids from the archive); `UNLINK` (combined with
    ///   `SECURE_SYMLINKS` it would silently delete a symlink in the way instead of failing; the staging folder
    ///   starts empty, so there is nothing else to unlink); `NO_OVERWRITE`/`NO_OVERWRITE_NEWER` (the staging
    ///   folder starts empty, so only the archive's own duplicates could be overwritten, and there the last one
    ///   wins as with `tar`); `SAFE_WRITES` (a rename per file, which costs time for nothing: the whole staging
    ///   folder is already moved into place atomically); `XATTR`, `ACL`, `FFLAGS` and `MAC_METADATA` (not needed,
    ///   and an immutable flag would make the content undeletable); `SPARSE` (scans every block for zeros).
    static func diskWriterOptions(for confinement: Confinement) -> Int32 {
        var options =
            ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_TIME
            | ARCHIVE_EXTRACT_PERM
        if confinement == .threadWorkingDirectory {
            options |= ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS
        }
        return options
    }

    // MARK: - Detection

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
    static func isArchive(at path: String) -> Bool {
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

    // MARK: - Extraction

    /// Extracts `archivePath` into `stagingDirectory`.
    ///
    /// The work runs on a new thread created and joined here: it switches that thread (only) to a UTF-8 locale so
    /// libarchive keeps Unicode names intact, gives it its own working directory and umask with
    /// `unshare(CLONE_FS)`, and `chdir`s it into the staging folder (see ``Confinement``). The process working
    /// directory, umask and locale, and every other thread, are untouched.
    ///
    /// Blocking, and for as long as the archive takes to unpack: call it off the Swift concurrency pool (a
    /// dedicated thread or an `NIOThreadPool`). Data is copied block by block; memory stays flat.
    ///
    /// - Parameters:
    ///   - archivePath: The archive file.
    ///   - stagingDirectory: An existing, empty directory on the same file system as the final destination.
    /// - Returns: How many entries and bytes were extracted, and libarchive's warnings.
    /// - Throws: ``ArchiveError``. On a throw the staging folder holds partial content: the caller deletes it.
    func extract(archiveAt archivePath: String, into stagingDirectory: String) throws -> ExtractionSummary {
        try Self.requireEmptyDirectory(stagingDirectory)
        let realStaging = try Self.realPath(of: stagingDirectory, kind: .io, what: "staging folder")
        let realArchive = try Self.realPath(of: archivePath, kind: .io, what: "archive", archivePath: archivePath)
        let limits = self.limits
        let confinement = self.confinement
        let result = try Self.runOnNewThread { () -> Result<ExtractionSummary, ArchiveError> in
            Result { () throws(ArchiveError) -> ExtractionSummary in
                try Self.extractOnCurrentThread(
                    archivePath: archivePath,
                    realArchive: realArchive,
                    realStaging: realStaging,
                    limits: limits,
                    confinement: confinement
                )
            }
        }
        return try result.get()
    }

    /// The body of ``extract(archiveAt:into:)``; must run on a thread of its own, which it changes for good
    /// (locale, working directory, umask), so that thread must end afterwards.
    private static func extractOnCurrentThread(
        archivePath: String,
        realArchive: String,
        realStaging: String,
        limits: UnpackLimits,
        confinement: Confinement
    ) throws(ArchiveError) -> ExtractionSummary {
        var notes: [String] = []

        // libarchive converts entry names to and from the current locale's character set; a Swift process runs
        // in the "C" locale, where "東京" is unconvertible and comes out empty. Switch this thread only.
        let utf8Locale = clibarchive_new_utf8_locale()
        let previousLocale = utf8Locale.flatMap { uselocale($0) }
        if utf8Locale == nil {
            notes.append("no UTF-8 locale is installed: non-ASCII entry names may not be extracted intact")
        }
        defer {
            // The thread ends right after this; restore anyway so nothing outlives the locale object.
            if let utf8Locale, let previousLocale {
                uselocale(previousLocale)
                freelocale(utf8Locale)
            }
        }

        // The libarchive objects live inside this call, so they are freed while the UTF-8 locale is in effect.
        return try extractWithLocale(
            archivePath: archivePath,
            realArchive: realArchive,
            realStaging: realStaging,
            limits: limits,
            confinement: confinement,
            notes: notes
        )
    }

    private static func extractWithLocale(
        archivePath: String,
        realArchive: String,
        realStaging: String,
        limits: UnpackLimits,
        confinement: Confinement,
        notes: [String]
    ) throws(ArchiveError) -> ExtractionSummary {
        var notes = notes
        // Opened by absolute path, before any chdir.
        let reader = try ArchiveReader(path: realArchive)

        var used = confinement
        if confinement == .threadWorkingDirectory {
            if clibarchive_unshare_fs() == 0 {
                guard chdir(realStaging) == 0 else {
                    throw ArchiveError(
                        kind: .io,
                        message: "cannot enter the staging folder \(realStaging): \(Self.errnoText(errno))",
                        archivePath: archivePath
                    )
                }
            } else {
                used = .absolutePathPrefix
                notes.append(
                    "unshare(CLONE_FS) failed (\(Self.errnoText(errno))): extracting with absolute paths instead"
                )
            }
        }
        let pathPrefix: [UInt8] = used == .threadWorkingDirectory ? [] : Array(realStaging.utf8) + [UInt8(ascii: "/")]

        // This thread's umask (private to it after unshare). libarchive does the same umask(0)/umask(old) dance
        // in every archive_write_header call.
        let umaskBits = umask(0)
        umask(umaskBits)

        let writer = try ArchiveWriter(options: diskWriterOptions(for: used), archivePath: archivePath)
        var session = ExtractionSession(
            archivePath: archivePath,
            realArchivePath: realArchive,
            limits: limits,
            pathPrefix: pathPrefix,
            permissionMask: 0o777 & ~UInt32(umaskBits)
        )
        var summary = try session.run(reader: reader, writer: writer)
        var warnings = reader.warnings
        warnings.append(contentsOf: writer.warnings)
        summary.warnings = notes + warnings.summary
        return summary
    }

    // MARK: - Helpers

    private static func requireEmptyDirectory(_ path: String) throws(ArchiveError) {
        guard let directory = opendir(path) else {
            throw ArchiveError(kind: .io, message: "cannot open the staging folder \(path): \(errnoText(errno))")
        }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." {
                throw ArchiveError(kind: .io, message: "the staging folder \(path) is not empty")
            }
        }
    }

    private static func realPath(
        of path: String,
        kind: ArchiveError.Kind,
        what: String,
        archivePath: String? = nil
    ) throws(ArchiveError) -> String {
        guard let resolved = realpath(path, nil) else {
            throw ArchiveError(
                kind: kind,
                message: "cannot resolve the \(what) \(path): \(errnoText(errno))",
                archivePath: archivePath
            )
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func errnoText(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }

    /// Runs `body` on a new POSIX thread and waits for it to end.
    ///
    /// A dedicated thread — not one of Swift's or Foundation's pooled threads — because the extraction changes
    /// its thread's working directory, umask and locale, and such a thread must die afterwards.
    private static func runOnNewThread<Output>(_ body: @escaping () -> Output) throws(ArchiveError) -> Output {
        // Written by the new thread before it ends and read here only after pthread_join, which orders the two.
        var output: Output?
        let context = Unmanaged.passRetained(ThreadWork { output = body() }).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread,
            nil,
            { raw in
                if let raw {
                    Unmanaged<ThreadWork>.fromOpaque(raw).takeRetainedValue().body()
                }
                return nil
            },
            context
        )
        guard status == 0 else {
            Unmanaged<ThreadWork>.fromOpaque(context).release()
            throw ArchiveError(kind: .io, message: "cannot start the extraction thread: \(errnoText(status))")
        }
        pthread_join(thread, nil)
        guard let output else {
            throw ArchiveError(kind: .io, message: "the extraction thread ended without a result")
        }
        return output
    }
}

/// The closure a thread started by `ArchiveExtractor.runOnNewThread` runs, passed through `pthread_create`'s
/// context pointer.
private final class ThreadWork {
    let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }
}

// MARK: - One extraction

/// The state of one extraction: counters against the limits, and the symbolic links created so far.
private struct ExtractionSession {
    let archivePath: String
    let realArchivePath: String
    let limits: UnpackLimits
    /// Empty when the thread's working directory is the staging folder, else the staging folder's real path and
    /// a slash.
    let pathPrefix: [UInt8]
    /// The permission bits an entry may keep: `0o777` less the umask (so never setuid, setgid or sticky).
    let permissionMask: UInt32

    /// Entries read.
    private(set) var entries = 0
    /// Objects created or replaced: entries, plus the parent folders libarchive creates implicitly for them.
    private(set) var objects = 0
    /// Bytes of data written (the extent of each entry, holes included).
    private(set) var bytes: Int64 = 0
    /// Normalised paths of the folders known to exist (explicit entries and implicit parents), so that implicit
    /// parents count towards ``UnpackLimits/maxEntries``: deep paths must not create folders for free.
    private var directories = Set<[UInt8]>()
    /// Normalised paths of the symbolic links extracted so far (nothing may be written through them).
    private var symlinks = Set<[UInt8]>()

    init(
        archivePath: String, realArchivePath: String, limits: UnpackLimits, pathPrefix: [UInt8], permissionMask: UInt32
    ) {
        self.archivePath = archivePath
        self.realArchivePath = realArchivePath
        self.limits = limits
        self.pathPrefix = pathPrefix
        self.permissionMask = permissionMask
    }

    mutating func run(reader: ArchiveReader, writer: ArchiveWriter) throws(ArchiveError) -> ExtractionSummary {
        var checkedContainer = false
        while true {
            let header: ArchiveEntryHeader?
            do {
                header = try reader.nextEntry()
            } catch var error {
                if reader.hasEncryptedEntries {
                    error.kind = .encrypted  // e.g. a 7z whose header is encrypted
                }
                throw error
            }
            if !checkedContainer {
                try checkContainer(reader)
                checkedContainer = true
            }
            guard let header else {
                break
            }
            entries += 1
            try process(header, reader: reader, writer: writer)
        }
        try writer.close()
        return ExtractionSummary(entries: entries, bytes: bytes, warnings: [])
    }

    /// Checks, once the format is known, that it is a real archive and, for ZIP, that it is complete.
    private func checkContainer(_ reader: ArchiveReader) throws(ArchiveError) {
        let base = reader.formatCode & ARCHIVE_FORMAT_BASE_MASK
        if base == 0 || base == ARCHIVE_FORMAT_EMPTY || base == ARCHIVE_FORMAT_RAW {
            throw ArchiveError(
                kind: .notAnArchive,
                message: "no archive format recognised (\(reader.formatName))",
                archivePath: archivePath
            )
        }
        if base == ARCHIVE_FORMAT_ZIP {
            try ZipEndRecord.verify(path: realArchivePath, archivePath: archivePath)
        }
    }

    private mutating func process(
        _ header: ArchiveEntryHeader,
        reader: ArchiveReader,
        writer: ArchiveWriter
    ) throws(ArchiveError) {
        guard let rawPath = header.pathnameBytes else {
            throw refusal(.unsafeEntry, "the entry's name cannot be read", entryPath: nil)
        }
        let entryPath = String(decoding: rawPath, as: UTF8.self)

        guard entries <= limits.maxEntries else {
            throw refusal(
                .limitExceeded, "the archive has more than \(limits.maxEntries) entries", entryPath: entryPath)
        }
        if header.isEncrypted {
            throw refusal(
                .encrypted, "the entry is encrypted; encrypted archives are not supported", entryPath: entryPath)
        }

        // Entry type.
        let hardlink = header.hardlinkBytes
        let symlink = hardlink == nil ? header.symlinkBytes : nil
        var fileType = header.fileType
        switch fileType {
        case CLIBARCHIVE_AE_IFREG, CLIBARCHIVE_AE_IFDIR, CLIBARCHIVE_AE_IFLNK:
            break
        case CLIBARCHIVE_AE_IFCHR:
            throw refusal(.unsupportedEntryType, "character devices are not extracted", entryPath: entryPath)
        case CLIBARCHIVE_AE_IFBLK:
            throw refusal(.unsupportedEntryType, "block devices are not extracted", entryPath: entryPath)
        case CLIBARCHIVE_AE_IFIFO:
            throw refusal(.unsupportedEntryType, "FIFOs are not extracted", entryPath: entryPath)
        case CLIBARCHIVE_AE_IFSOCK:
            throw refusal(.unsupportedEntryType, "sockets are not extracted", entryPath: entryPath)
        case 0 where hardlink != nil:
            break  // tar hard links carry no type: they take their target's
        case 0 where symlink == nil:
            // Some writers leave the type bits out; libarchive would create a regular file anyway. Say so.
            fileType = CLIBARCHIVE_AE_IFREG
            header.setFileType(fileType)
        default:
            throw refusal(
                .unsupportedEntryType,
                "unknown file type 0o\(String(fileType, radix: 8))",
                entryPath: entryPath
            )
        }
        if fileType == CLIBARCHIVE_AE_IFLNK && symlink == nil && hardlink == nil {
            throw refusal(.unsafeEntry, "symbolic link without a target", entryPath: entryPath)
        }

        // Path.
        let components: [[UInt8]]
        do {
            components = try EntryPathPolicy.normalize(rawPath)
        } catch {
            throw refusal(.unsafeEntry, error.reason, entryPath: entryPath)
        }
        if components.isEmpty {
            if fileType == CLIBARCHIVE_AE_IFDIR && hardlink == nil {
                return  // "./": the staging folder itself, which already exists. Keep its own metadata.
            }
            throw refusal(.unsafeEntry, "the entry names the destination folder itself", entryPath: entryPath)
        }
        let path = EntryPathPolicy.join(components)
        try refuseWritingThroughSymlink(components, what: "the entry's path", entryPath: entryPath)
        try countObjects(components, path: path, isDirectory: fileType == CLIBARCHIVE_AE_IFDIR, entryPath: entryPath)

        // Links.
        if let hardlink {
            let target: [[UInt8]]
            do {
                target = try EntryPathPolicy.normalize(hardlink)
            } catch {
                throw refusal(.unsafeEntry, "hard link target: \(error.reason)", entryPath: entryPath)
            }
            guard !target.isEmpty else {
                throw refusal(.unsafeEntry, "hard link to the destination folder itself", entryPath: entryPath)
            }
            let targetPath = EntryPathPolicy.join(target)
            // link(2) does not follow a symlink it is given: the new name would be a copy of the symlink, whose
            // relative target then resolves from a different folder.
            guard !symlinks.contains(targetPath) else {
                throw refusal(.unsafeEntry, "hard link to a symbolic link", entryPath: entryPath)
            }
            try refuseWritingThroughSymlink(target, what: "the hard link target", entryPath: entryPath)
            header.setHardlink(pathPrefix + targetPath)
        }
        if let symlink {
            do {
                try EntryPathPolicy.checkSymlinkTarget(symlink, linkDepth: components.count - 1)
            } catch {
                throw refusal(.unsafeEntry, error.reason, entryPath: entryPath)
            }
        }

        // Declared size: fail fast on a bomb that announces itself.
        let remaining = limits.maxTotalBytes - bytes
        if let declared = header.declaredSize, declared > remaining {
            throw refusal(
                .limitExceeded,
                "the entry declares \(declared) bytes but only \(max(remaining, 0)) of the "
                    + "\(limits.maxTotalBytes)-byte limit remain",
                entryPath: entryPath
            )
        }

        // Permissions: no setuid/setgid/sticky, umask applied, and the owner can always read files and
        // read/write/search directories, so that the content can be moved and deleted later.
        if hardlink == nil && symlink == nil {
            var permissions = header.permissions & permissionMask
            permissions |= fileType == CLIBARCHIVE_AE_IFDIR ? 0o700 : 0o400
            header.setPermissions(permissions)
        }

        // With absolute paths, libarchive handles a path of PATH_MAX or more by chdir-ing down the folders and back,
        // which would move the working directory of the whole process (it is shared without unshare).
        if !pathPrefix.isEmpty && pathPrefix.count + path.count >= Int(PATH_MAX) {
            throw refusal(
                .unsafeEntry,
                "the path is too long to extract without a private working directory",
                entryPath: entryPath
            )
        }
        header.setPathname(pathPrefix + path)
        try writer.writeHeader(header, entryPath: entryPath)
        if symlink != nil {
            symlinks.insert(path)
        } else if !symlinks.isEmpty {
            symlinks.remove(path)  // libarchive replaced the symlink that was there
        }

        // Data, block by block, counted before it is written.
        var extent: Int64 = 0
        while let block = try reader.readDataBlock(entryPath: entryPath) {
            let (end, overflow) = block.offset.addingReportingOverflow(Int64(block.bytes.count))
            if overflow || block.offset < 0 {
                throw refusal(.corrupt, "data block at an impossible offset \(block.offset)", entryPath: entryPath)
            }
            if end > extent {
                guard end - extent <= limits.maxTotalBytes - bytes else {
                    throw refusal(
                        .limitExceeded,
                        "unpacked data exceeds the limit of \(limits.maxTotalBytes) bytes",
                        entryPath: entryPath
                    )
                }
                bytes += end - extent
                extent = end
            }
            try writer.writeDataBlock(block.bytes, offset: block.offset, entryPath: entryPath)
        }
        try writer.finishEntry(entryPath: entryPath)
    }

    /// Counts the entry and any parent folders that do not exist yet against ``UnpackLimits/maxEntries``.
    private mutating func countObjects(
        _ components: [[UInt8]],
        path: [UInt8],
        isDirectory: Bool,
        entryPath: String
    ) throws(ArchiveError) {
        var missingParents = 0
        var depth = components.count - 1
        while depth > 0 {
            let parent = EntryPathPolicy.join(Array(components[..<depth]))
            if directories.contains(parent) {
                break
            }
            directories.insert(parent)
            missingParents += 1
            depth -= 1
        }
        if isDirectory {
            directories.insert(path)
        }
        objects += 1 + missingParents
        guard objects <= limits.maxEntries else {
            throw refusal(
                .limitExceeded,
                "the archive creates more than \(limits.maxEntries) files and folders",
                entryPath: entryPath
            )
        }
    }

    /// Refuses a path whose parent folders include a symbolic link extracted earlier (libarchive's
    /// `ARCHIVE_EXTRACT_SECURE_SYMLINKS` checks the same on disk).
    private func refuseWritingThroughSymlink(
        _ components: [[UInt8]],
        what: String,
        entryPath: String
    ) throws(ArchiveError) {
        guard !symlinks.isEmpty, components.count > 1 else {
            return
        }
        var prefix: [UInt8] = []
        for component in components.dropLast() {
            if !prefix.isEmpty {
                prefix.append(UInt8(ascii: "/"))
            }
            prefix += component
            if symlinks.contains(prefix) {
                throw refusal(
                    .unsafeEntry,
                    "\(what) passes through the symbolic link '\(String(decoding: prefix, as: UTF8.self))'",
                    entryPath: entryPath
                )
            }
        }
    }

    private func refusal(_ kind: ArchiveError.Kind, _ message: String, entryPath: String?) -> ArchiveError {
        ArchiveError(kind: kind, message: message, entryPath: entryPath, archivePath: archivePath)
    }
}

// MARK: - Path rules

/// The path rules applied to every entry before libarchive sees it. Pure functions on bytes: names need not be
/// valid UTF-8 (Linux file names are bytes), and any non-ASCII text is allowed.
enum EntryPathPolicy {
    /// Why a path was refused.
    struct Refusal: Error, Sendable, Hashable {
        var reason: String
    }

    private static let slash = UInt8(ascii: "/")
    private static let backslash = UInt8(ascii: "\\")
    private static let dot: [UInt8] = [UInt8(ascii: ".")]
    private static let dotDot: [UInt8] = [UInt8(ascii: "."), UInt8(ascii: ".")]

    /// Splits an entry path (or hard-link target) into its components, dropping empty and `.` components.
    ///
    /// - Parameter path: The path as stored.
    /// - Returns: The components; empty for `./` and the like, which name the destination folder itself.
    /// - Throws: ``Refusal`` for an empty or absolute path, a `..` component (also one spelt with Windows
    ///   backslashes, `..\\`), or a control character (C0 or DEL: they corrupt terminal output and logs and
    ///   no real issue uses them).
    static func normalize(_ path: [UInt8]) throws(Refusal) -> [[UInt8]] {
        guard !path.isEmpty else {
            throw Refusal(reason: "the path is empty")
        }
        guard !containsControlCharacter(path) else {
            throw Refusal(reason: "the path contains a control character")
        }
        guard path[0] != slash else {
            throw Refusal(reason: "the path is absolute")
        }
        var components: [[UInt8]] = []
        for component in path.split(separator: slash, omittingEmptySubsequences: true) {
            let component = Array(component)
            if component == dot {
                continue
            }
            if component == dotDot || hasBackslashDotDot(component) {
                throw Refusal(reason: "the path has a '..' component")
            }
            components.append(component)
        }
        return components
    }

    /// Checks a symbolic link's target. The link lives `linkDepth` folders below the destination root.
    ///
    /// Allowed: a relative target made of some leading `..` (no more than `linkDepth`) followed by names, such as
    /// `v2/readme.txt` or `../shared/logo.png`. Refused: an empty or absolute target, control characters, more
    /// leading `..` than the link is deep, and a `..` after a name (`a/../b`). The last rule is stricter than a
    /// lexical check on purpose: with links `d -> .` and `e -> d/..`, `e` looks lexically like the root but
    /// resolves to the root's parent, because `d/..` is the parent of wherever `d` points. With only leading
    /// `..`, each link climbs real folders (nothing is ever written through a symlink, so a link's parents are
    /// real) and then only descends, and every symlink it descends through is, by the same rule, inside the root.
    ///
    /// - Parameters:
    ///   - target: The link target as stored.
    ///   - linkDepth: How many folders lie between the destination root and the link.
    /// - Throws: ``Refusal``.
    static func checkSymlinkTarget(_ target: [UInt8], linkDepth: Int) throws(Refusal) {
        guard !target.isEmpty else {
            throw Refusal(reason: "the symbolic link's target is empty")
        }
        guard !containsControlCharacter(target) else {
            throw Refusal(reason: "the symbolic link's target contains a control character")
        }
        let shown = String(decoding: target, as: UTF8.self)
        guard target[0] != slash else {
            throw Refusal(reason: "the symbolic link's target '\(shown)' is absolute")
        }
        var climbs = 0
        var descended = false
        for component in target.split(separator: slash, omittingEmptySubsequences: true) {
            let component = Array(component)
            if component == dot {
                continue
            }
            if hasBackslashDotDot(component) {
                throw Refusal(reason: "the symbolic link's target '\(shown)' has a '..\\' component")
            }
            if component == dotDot {
                guard !descended else {
                    throw Refusal(reason: "the symbolic link's target '\(shown)' has a '..' after a name")
                }
                climbs += 1
            } else {
                descended = true
            }
        }
        guard climbs <= linkDepth else {
            throw Refusal(reason: "the symbolic link's target '\(shown)' points outside the destination")
        }
    }

    /// Joins components with `/`.
    static func join(_ components: [[UInt8]]) -> [UInt8] {
        Array(components.joined(separator: [slash]))
    }

    private static func containsControlCharacter(_ bytes: [UInt8]) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// `..\evil` is one harmless name on Linux, but a traversal wherever the folder is later copied to a system
    /// that treats `\` as a separator; nothing legitimate is named like that.
    private static func hasBackslashDotDot(_ component: [UInt8]) -> Bool {
        component.contains(backslash)
            && component.split(separator: backslash, omittingEmptySubsequences: true).contains { Array($0) == dotDot }
    }
}

// MARK: - ZIP completeness

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
            throw ArchiveError(
                kind: .io, message: "cannot open: \(ArchiveExtractor.errnoText(errno))", archivePath: archivePath)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw ArchiveError(
                kind: .io, message: "cannot stat: \(ArchiveExtractor.errnoText(errno))", archivePath: archivePath)
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
        var filled = 0
        while filled < count {
            let got = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else {
                    return 0
                }
                return pread(descriptor, base + filled, count - filled, off_t(offset) + off_t(filled))
            }
            if got < 0 && errno == EINTR {
                continue
            }
            guard got > 0 else {
                if got == 0 {
                    break
                }
                throw ArchiveError(
                    kind: .io, message: "cannot read: \(ArchiveExtractor.errnoText(errno))", archivePath: archivePath)
            }
            filled += got
        }
        return Array(buffer.prefix(filled))
    }
}
