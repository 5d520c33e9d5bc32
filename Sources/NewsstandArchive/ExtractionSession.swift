// Over 400 lines, one job: one worker's checks of every entry (type, path, links, limits) before
// libarchive writes it; they read and update the same session state.
internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import Glibc

/// One worker's part of an extraction: every `budget.workers`-th entry from `worker` on, counted against
/// the limits in the budget all workers share, and the symbolic links created so far.
struct ExtractionSession {
    let archivePath: String
    let realArchivePath: String
    let limits: UnpackLimits
    /// Empty when the thread's working directory is the staging folder, else the staging folder's real path and
    /// a slash.
    let pathPrefix: [UInt8]
    /// The permission bits an entry may keep: `0o777` less the umask (so never setuid, setgid or sticky).
    let permissionMask: UInt32

    /// Which of the budget's workers this is.
    let worker: Int
    /// The totals, folders and failure shared with the other workers.
    let budget: ExtractionBudget
    /// Entries read (this worker reads every entry's header, and unpacks its own share).
    private(set) var entries = 0
    /// The most bytes the file system has room for (free space less its margin), when known: a bomb
    /// that declares no sizes stops here, having filled nothing.
    var spaceLimit: Int64?
    /// What was created, for the content record, with each entry's index in the archive.
    private(set) var placed: [(index: Int, entry: PlacedEntry)] = []
    /// Normalised paths of the symbolic links extracted so far (nothing may be written through them).
    private var symlinks = Set<[UInt8]>()

    init(
        archivePath: String, realArchivePath: String, limits: UnpackLimits, pathPrefix: [UInt8], permissionMask: UInt32,
        worker: Int = 0, budget: ExtractionBudget = ExtractionBudget()
    ) {
        self.worker = worker
        self.budget = budget
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
        guard let cap = expansionCap, let archiveBytes, more > cap - budget.bytes else { return }
        throw refusal(
            .limitExceeded,
            (declared ? "the entry declares \(more) bytes, which would" : "the unpacked data would")
                + " expand the \(archiveBytes)-byte archive more than \(limits.maxExpansionRatio) times"
                + " (past \(limits.expansionRatioFloor) bytes; an archive bomb?)",
            entryPath: entryPath)
    }

    /// Warnings of the second reader worker 0 opens when folders go first.
    private(set) var secondReaderWarnings = WarningList()

    /// Which entries one pass over the archive unpacks.
    private enum Pass {
        /// This worker's share of all entries.
        case share
        /// Only the folders (worker 0, before anyone's files).
        case directories
        /// This worker's share of everything but folders.
        case filesOfShare
    }

    /// Unpacks this worker's entries, then waits for the other workers before closing the writer (which
    /// sets the final times of folders they may have written into). A failure is recorded in the budget,
    /// at the index of the entry concerned, not thrown.
    /// - Parameter reopen: Opens the archive again, for worker 0's second pass when folders go first.
    mutating func run(
        reader: ArchiveReader, writer: ArchiveWriter, reopen: () throws(ArchiveError) -> ArchiveReader
    ) {
        if !budget.plan.directoriesFirst {
            unpack(.share, reader: reader, writer: writer)
        } else if worker == 0 {
            unpack(.directories, reader: reader, writer: writer)
            budget.announceDirectoriesReady()
            if budget.failure == nil {
                do {
                    let second = try reopen()
                    entries = 0
                    unpack(.filesOfShare, reader: second, writer: writer)
                    secondReaderWarnings = second.warnings
                } catch {
                    budget.fail(at: -1, error)
                }
            }
        } else {
            budget.waitForDirectories()
            unpack(.filesOfShare, reader: reader, writer: writer)
        }
        budget.waitForAllWorkers(worker)
        guard budget.failure == nil else { return }
        do {
            try writer.close()
        } catch {
            budget.fail(at: Int.max, error)
        }
    }

    /// Failures go to the budget at the index of the entry they concern.
    private mutating func unpack(_ pass: Pass, reader: ArchiveReader, writer: ArchiveWriter) {
        var checkedContainer = false
        while true {
            // `entries` is the index of the entry about to be read.
            if budget.shouldStop(before: entries) { return }
            let header: ArchiveEntryHeader?
            do {
                header = try reader.nextEntry()
                if !checkedContainer {
                    try checkContainer(reader)
                    checkedContainer = true
                }
            } catch var error {
                if reader.hasEncryptedEntries {
                    error.kind = .encrypted  // e.g. a 7z whose header is encrypted
                }
                budget.fail(at: entries, error)
                return
            }
            guard let header else {
                return
            }
            entries += 1
            // Another worker's entry, or another pass's: the seekable ZIP reader skips its data without inflating it.
            let mine =
                switch pass {
                case .share: (entries - 1) % budget.workers == worker
                case .directories: header.fileType == CLIBARCHIVE_AE_IFDIR
                case .filesOfShare:
                    header.fileType != CLIBARCHIVE_AE_IFDIR && (entries - 1) % budget.workers == worker
                }
            guard mine else { continue }
            do {
                try process(header, reader: reader, writer: writer)
            } catch {
                budget.fail(at: entries - 1, error)
                return
            }
        }
    }

    /// Checks, once the format is known, that it is a real archive and, for ZIP, that it is complete.
    private func checkContainer(_ reader: ArchiveReader) throws(ArchiveError) {
        let base = reader.formatCode & ARCHIVE_FORMAT_BASE_MASK
        if !ArchiveReader.allowedFormatCodes.contains(base) {
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

        let hardlink = header.hardlinkBytes
        let symlink = hardlink == nil ? header.symlinkBytes : nil
        let fileType = try entryType(of: header, hardlink: hardlink, symlink: symlink, entryPath: entryPath)

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

        try checkLinks(of: header, at: components, hardlink: hardlink, symlink: symlink, entryPath: entryPath)

        // Declared size: fail fast on a bomb that announces itself. Counted now, before the entry exists:
        // libarchive gives a file its declared size even when fewer bytes follow, and another worker must not
        // take the same room in the meantime.
        let declaredSize = header.declaredSize
        var reserved: Int64 = 0
        if let declared = declaredSize {
            try count(declared, declared: true, entryPath: entryPath)
            reserved = declared
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

        let extent = try writeData(from: reader, to: writer, reserved: reserved, entryPath: entryPath)
        try writer.finishEntry(entryPath: entryPath)
        if let text = String(validating: path, as: UTF8.self) {
            let size = max(declaredSize ?? extent, extent)
            let entry = Self.placedEntry(text, fileType: fileType, hardlink: hardlink, symlink: symlink, size: size)
            placed.append((entries - 1, entry))
        }
    }

    /// What the content record says of an entry placed at `path`: a hard link is a file of its target's size
    /// (not known here), a symbolic link and a folder have none, a file has `size` (libarchive sizes a sparse
    /// file to its declared size, past its last data block).
    private static func placedEntry(
        _ path: String, fileType: UInt32, hardlink: [UInt8]?, symlink: [UInt8]?, size: Int64
    ) -> PlacedEntry {
        if hardlink != nil { return PlacedEntry(path: path, kind: .file, size: nil) }
        if symlink != nil { return PlacedEntry(path: path, kind: .link, size: nil) }
        if fileType == CLIBARCHIVE_AE_IFDIR { return PlacedEntry(path: path, kind: .directory, size: nil) }
        return PlacedEntry(path: path, kind: .file, size: size)
    }

    /// The entry's file type, once it is one that is extracted: regular files, folders and links (a tar hard
    /// link's, which carries none, is its target's). Devices, FIFOs, sockets and unknown types are refused.
    private func entryType(
        of header: ArchiveEntryHeader, hardlink: [UInt8]?, symlink: [UInt8]?, entryPath: String
    ) throws(ArchiveError) -> UInt32 {
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
        // Several workers unpack only archives whose central directory lists no link (see ExtractionPlan); an
        // entry that turns out to be one anyway could be passed through by another worker's entries.
        if budget.workers > 1 && (symlink != nil || hardlink != nil) {
            throw refusal(
                .unsafeEntry, "a link the ZIP's central directory does not list as one", entryPath: entryPath)
        }
        return fileType
    }

    /// Checks a link entry: a hard link's target stays inside and is no symbolic link (then the header points
    /// at it under the staging folder); a symbolic link's target stays inside from where the link is.
    private func checkLinks(
        of header: ArchiveEntryHeader, at components: [[UInt8]], hardlink: [UInt8]?, symlink: [UInt8]?,
        entryPath: String
    ) throws(ArchiveError) {
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
    }

    /// Writes the entry's data, block by block, each counted before it is written (past the `reserved` bytes
    /// its declared size counted already).
    /// - Returns: The end of its last block.
    private func writeData(
        from reader: ArchiveReader, to writer: ArchiveWriter, reserved: Int64, entryPath: String
    ) throws(ArchiveError) -> Int64 {
        var extent: Int64 = 0
        var counted = reserved
        while let block = try reader.readDataBlock(entryPath: entryPath) {
            let (end, overflow) = block.offset.addingReportingOverflow(Int64(block.bytes.count))
            if overflow || block.offset < 0 {
                throw refusal(.corrupt, "data block at an impossible offset \(block.offset)", entryPath: entryPath)
            }
            extent = max(extent, end)
            if end > counted {
                try count(end - counted, declared: false, entryPath: entryPath)
                counted = end
            }
            try writer.writeDataBlock(block.bytes, offset: block.offset, entryPath: entryPath)
        }
        return extent
    }

    /// Adds `more` bytes to the total, or throws naming the first limit it would pass: the byte limit, the
    /// expansion ratio, the free space. Checked and added in one step, so that workers adding at once cannot
    /// pass a limit together. `declared`: announced by a header, not yet written.
    private func count(_ more: Int64, declared: Bool, entryPath: String) throws(ArchiveError) {
        let cap = min(limits.maxTotalBytes, expansionCap ?? .max, spaceLimit ?? .max)
        guard budget.addBytes(more, limit: cap) == nil else { return }
        let bytes = budget.bytes
        if more > limits.maxTotalBytes - bytes {
            throw refusal(
                .limitExceeded,
                declared
                    ? "the entry declares \(more) bytes but only \(max(limits.maxTotalBytes - bytes, 0)) of the "
                        + "\(limits.maxTotalBytes)-byte limit remain"
                    : "unpacked data exceeds the limit of \(limits.maxTotalBytes) bytes",
                entryPath: entryPath)
        }
        try checkExpansion(adding: more, declared: declared, entryPath: entryPath)
        let room = max((spaceLimit ?? .max) - bytes, 0)
        throw refusal(
            .insufficientSpace,
            declared
                ? "the entry declares \(more) bytes but the file system has room for only \(room) more"
                : "the unpacked data would pass the \(spaceLimit ?? 0) bytes the file system has room for",
            entryPath: entryPath)
    }

    /// Counts the entry and any parent folders that do not exist yet against ``UnpackLimits/maxEntries``.
    private func countObjects(
        _ components: [[UInt8]],
        path: [UInt8],
        isDirectory: Bool,
        entryPath: String
    ) throws(ArchiveError) {
        var parents: [[UInt8]] = []
        var depth = components.count - 1
        while depth > 0 {
            parents.append(EntryPathPolicy.join(Array(components[..<depth])))
            depth -= 1
        }
        let objects = budget.addObject(parents: parents, directory: isDirectory ? path : nil)
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
