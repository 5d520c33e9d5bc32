internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import Glibc
import NewsstandCore

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
package struct ArchiveExtractor: Sendable {
    /// How entry paths are kept inside the staging folder.
    package enum Confinement: Sendable, Hashable {
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
    /// The most workers that unpack one archive at once (see ``ExtractionPlan``): the processors, at most 4.
    var maxWorkers = min(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1), 4)
    /// The fewest entries an archive needs to be unpacked by several workers.
    var parallelThreshold = ExtractionPlan.defaultThreshold

    /// Creates an extractor.
    ///
    /// - Parameters:
    ///   - limits: The limits enforced.
    ///   - confinement: The preferred confinement.
    package init(limits: UnpackLimits = .default, confinement: Confinement = .threadWorkingDirectory) {
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

    // MARK: - Extraction

    /// Extracts `archivePath` into `stagingDirectory`.
    ///
    /// The work runs on new threads created and joined here, one per worker (several for a large ZIP whose entries
    /// cannot interfere, see ``ExtractionPlan``; else one): each switches itself (only) to a UTF-8 locale so
    /// libarchive keeps Unicode names intact, gets its own working directory and umask with `unshare(CLONE_FS)`,
    /// and `chdir`s into the staging folder (see ``Confinement``). The process working directory, umask and
    /// locale, and every other thread, are untouched.
    ///
    /// Blocking, and for as long as the archive takes to unpack: call it off the Swift concurrency pool (a
    /// dedicated thread or an `NIOThreadPool`). Data is copied block by block; memory stays flat.
    ///
    /// - Parameters:
    ///   - archivePath: The archive file.
    ///   - stagingDirectory: An existing, empty directory on the same file system as the final destination.
    /// - Returns: How many entries and bytes were extracted, and libarchive's warnings.
    /// - Throws: ``ArchiveError``. On a throw the staging folder holds partial content: the caller deletes it.
    package func extract(archiveAt archivePath: String, into stagingDirectory: String) throws -> ExtractionSummary {
        try Self.requireEmptyDirectory(stagingDirectory)
        let realStaging = try Self.realPath(of: stagingDirectory, kind: .io, what: "staging folder")
        let realArchive = try Self.realPath(of: archivePath, kind: .io, what: "archive", archivePath: archivePath)
        let limits = self.limits
        let confinement = self.confinement
        // Several workers only where each can have its own working directory: with absolute paths, libarchive's
        // umask(0)/umask(old) on each entry would race between them on the process-wide umask.
        var plan = ExtractionPlan.sequential
        if confinement == .threadWorkingDirectory {
            plan = ExtractionPlan.make(forArchiveAt: realArchive, maximum: maxWorkers, threshold: parallelThreshold)
            if plan.workers > 1, (try? DedicatedThread.run({ clibarchive_unshare_fs() == 0 })) != true {
                plan = .sequential
            }
        }
        let workers = plan.workers
        let budget = ExtractionBudget(plan: plan)
        // The free space is a limit too: an archive that would fill the disk stops before it does.
        let spaceLimit = FreeSpace.figures(at: realStaging).map { max(0, $0.available - $0.margin) }
        let bodies: [() -> WorkerOutput?] = (0..<workers).map { worker in
            { () -> WorkerOutput? in
                var output: WorkerOutput?
                do throws(ArchiveError) {
                    output = try Self.extractOnCurrentThread(
                        archivePath: archivePath,
                        realArchive: realArchive,
                        realStaging: realStaging,
                        limits: limits,
                        confinement: confinement,
                        worker: worker,
                        budget: budget,
                        spaceLimit: spaceLimit
                    )
                } catch {
                    budget.fail(at: -1, error)
                }
                // Both at once if the session already did them.
                if worker == 0 { budget.announceDirectoriesReady() }
                budget.waitForAllWorkers(worker)
                return output
            }
        }
        let results = DedicatedThread.runAll(bodies) { worker in
            budget.fail(at: -1, ArchiveError(kind: .io, message: "cannot start extraction thread \(worker)"))
            budget.withdraw(worker)
        }
        if let failure = budget.failure {
            throw failure
        }
        var outputs: [WorkerOutput] = []
        for result in results {
            guard let output = try result.get() else {
                throw ArchiveError(kind: .io, message: "an extraction thread ended without a result")
            }
            outputs.append(output)
        }
        var placed = outputs.flatMap(\.placed)
        if outputs.count > 1 { placed.sort { $0.index < $1.index } }
        return ExtractionSummary(
            entries: outputs.map(\.entries).max() ?? 0,
            bytes: budget.bytes,
            warnings: outputs.flatMap(\.warnings),
            placed: placed.map(\.entry),
            workers: workers)
    }

    /// What one worker leaves: the entries it read, what it placed (with archive indices), its warnings.
    private struct WorkerOutput {
        var entries: Int
        var placed: [(index: Int, entry: PlacedEntry)]
        var warnings: [String]
    }

    /// The body of ``extract(archiveAt:into:)``; must run on a thread of its own, which it changes for good
    /// (locale, working directory, umask), so that thread must end afterwards.
    private static func extractOnCurrentThread(
        archivePath: String,
        realArchive: String,
        realStaging: String,
        limits: UnpackLimits,
        confinement: Confinement,
        worker: Int,
        budget: ExtractionBudget,
        spaceLimit: Int64?
    ) throws(ArchiveError) -> WorkerOutput {
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
            notes: notes,
            worker: worker,
            budget: budget,
            spaceLimit: spaceLimit
        )
    }

    private static func extractWithLocale(
        archivePath: String,
        realArchive: String,
        realStaging: String,
        limits: UnpackLimits,
        confinement: Confinement,
        notes: [String],
        worker: Int,
        budget: ExtractionBudget,
        spaceLimit: Int64?
    ) throws(ArchiveError) -> WorkerOutput {
        var notes = notes
        // Opened by absolute path, before any chdir.
        let reader = try ArchiveReader(path: realArchive)

        var used = confinement
        if confinement == .threadWorkingDirectory {
            if clibarchive_unshare_fs() == 0 {
                guard chdir(realStaging) == 0 else {
                    throw ArchiveError.system(
                        errno, "cannot enter the staging folder \(realStaging)", archivePath: archivePath)
                }
            } else {
                used = .absolutePathPrefix
                notes.append(
                    "unshare(CLONE_FS) failed (\(POSIX.describe(errno))): extracting with absolute paths instead"
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
            permissionMask: 0o777 & ~UInt32(umaskBits),
            worker: worker,
            budget: budget
        )
        session.spaceLimit = spaceLimit
        session.run(reader: reader, writer: writer) { () throws(ArchiveError) in
            try ArchiveReader(path: realArchive)
        }
        var warnings = reader.warnings
        warnings.append(contentsOf: session.secondReaderWarnings)
        warnings.append(contentsOf: writer.warnings)
        return WorkerOutput(entries: session.entries, placed: session.placed, warnings: notes + warnings.summary)
    }

    // MARK: - Helpers

    private static func requireEmptyDirectory(_ path: String) throws(ArchiveError) {
        guard let directory = opendir(path) else {
            throw ArchiveError.system(errno, "cannot open the staging folder \(path)")
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
            let code = errno
            throw ArchiveError(
                kind: kind,
                message: "cannot resolve the \(what) \(path): \(POSIX.describe(code))",
                archivePath: archivePath,
                errno: code
            )
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
