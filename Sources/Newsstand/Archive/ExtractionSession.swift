internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import Glibc

/// The state of one extraction: counters against the limits, and the symbolic links created so far.
struct ExtractionSession {
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
    /// The most bytes the file system has room for (free space less its margin), when known: a bomb
    /// that declares no sizes stops here, having filled nothing.
    var spaceLimit: Int64?
    /// What was created, for the content record.
    private(set) var placed: [PlacedEntry] = []
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
        var info = stat()
        archiveBytes = stat(realArchivePath, &info) == 0 ? Int64(info.st_size) : nil
    }

    /// The archive file's size, for the expansion ratio (unknown if it cannot be read: the ratio is then not
    /// applied, and reading fails anyway).
    let archiveBytes: Int64?

    /// The ratio limit on the bytes unpacked, when it binds more tightly than ``UnpackLimits/maxTotalBytes``.
    private var expansionCap: Int64? {
        guard let archiveBytes else { return nil }
        let cap = limits.expansionCap(archiveBytes: archiveBytes)
        return cap < limits.maxTotalBytes ? cap : nil
    }

    /// Throws when `bytes` more would pass the expansion-ratio cap; `declared` says whether they are only announced.
    private func checkExpansion(adding more: Int64, declared: Bool, entryPath: String) throws(ArchiveError) {
        guard let cap = expansionCap, let archiveBytes, more > cap - bytes else { return }
        throw refusal(
            .limitExceeded,
            (declared ? "the entry declares \(more) bytes, which would" : "the unpacked data would")
                + " expand the \(archiveBytes)-byte archive more than \(limits.maxExpansionRatio) times"
                + " (past \(limits.expansionRatioFloor) bytes; an archive bomb?)",
            entryPath: entryPath)
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
        return ExtractionSummary(entries: entries, bytes: bytes, warnings: [], placed: placed)
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
        let declaredSize = header.declaredSize
        if let declared = declaredSize, declared > remaining {
            throw refusal(
                .limitExceeded,
                "the entry declares \(declared) bytes but only \(max(remaining, 0)) of the "
                    + "\(limits.maxTotalBytes)-byte limit remain",
                entryPath: entryPath
            )
        }

        if let declared = declaredSize {
            try checkExpansion(adding: declared, declared: true, entryPath: entryPath)
        }

        if let declared = declaredSize, let spaceLimit, declared > spaceLimit - bytes {
            throw refusal(
                .insufficientSpace,
                "the entry declares \(declared) bytes but the file system has room for only "
                    + "\(max(spaceLimit - bytes, 0)) more",
                entryPath: entryPath)
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
                try checkExpansion(adding: end - extent, declared: false, entryPath: entryPath)
                bytes += end - extent
                extent = end
                if let spaceLimit, bytes > spaceLimit {
                    throw refusal(
                        .insufficientSpace,
                        "the unpacked data passed the \(spaceLimit) bytes the file system has room for",
                        entryPath: entryPath)
                }
            }
            try writer.writeDataBlock(block.bytes, offset: block.offset, entryPath: entryPath)
        }
        try writer.finishEntry(entryPath: entryPath)
        if let text = String(validating: path, as: UTF8.self) {
            if hardlink != nil {
                placed.append(PlacedEntry(path: text, kind: .file, size: nil))
            } else if symlink != nil {
                placed.append(PlacedEntry(path: text, kind: .link, size: nil))
            } else if fileType == CLIBARCHIVE_AE_IFDIR {
                placed.append(PlacedEntry(path: text, kind: .directory, size: nil))
            } else {
                // libarchive sizes a sparse file to its declared size, past its last data block.
                placed.append(PlacedEntry(path: text, kind: .file, size: max(declaredSize ?? extent, extent)))
            }
        }
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
