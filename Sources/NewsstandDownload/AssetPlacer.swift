internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation
import NewsstandCore
import NewsstandArchive
import NewsstandCatalog

/// The last step of a download: a complete, verified file in `.downloads` becomes content, unpacked
/// into the issue's folder or placed there under a name of its own. Blocking, and it needs no actor:
/// every step that touches the issue's folder holds the issue's lock and re-reads the catalog, so a
/// `remove` in any process and the placing never cross. The catalog commits around it are the run's.
struct AssetPlacer: Sendable {
    /// Where an asset goes.
    struct Target: Sendable {
        var assetID: String
        var issueName: String
        var folderName: String
        /// A filed issue's file stem: the placed file is named by it (``FileNaming/filedName(stem:for:contentType:)``).
        var fileStem: String? = nil
        /// The issue's lock file's name (``Issue/lockName``).
        var lockName: String { Issue.lockName(folder: folderName, stem: fileStem) }
    }

    let layout: LibraryLayout
    let catalog: Catalog
    let unpackLimits: UnpackLimits
    /// Whether what is placed is flushed to disk before the catalog records it (off with `--no-fsync`).
    var flushes = true

    /// Unpacks the asset's finished archive through its staging folder into the issue's content folder,
    /// and writes the content record that `verify` checks the folder against.
    /// - Parameter keepingArchive: Also place the archive itself in the folder.
    /// - Returns: The kept archive's name, or nil.
    /// - Throws: `NewsstandError` (`.unsafeArchiveEntry`, `.insufficientSpace`, `.unpackFailed`),
    ///   ``DownloadRun/AssetRemoved`` when the issue went while it was unpacked, or I/O errors. The staging
    ///   folder is removed on failure.
    func unpack(
        _ asset: AssetDownload, into target: Target, keepingArchive: Bool, record: ResumeRecord?
    ) throws -> String? {
        let layout = self.layout
        let completed = layout.completedFile(target.assetID)
        let staging = layout.stagingFolder(target.assetID)
        let content = layout.contentFolder(target.folderName)
        try TreeRemover.remove(staging)
        try checkSpaceToUnpack(completed, asset: asset, issueName: target.issueName)
        try POSIX.makeDirectory(staging)
        do {
            // Extraction needs no lock: the staging folder is this asset's alone.
            let summary = try ArchiveExtractor(limits: unpackLimits).extract(archiveAt: completed, into: staging)
            return try whileListed(target) { () -> String? in
                try POSIX.makeDirectory(content)
                try mergeStaging(staging, into: content)
                // Before the commit, so that an unpacked asset always has it (a crash before the commit redoes
                // the unpack and rewrites it).
                try ContentRecord(assetID: target.assetID, entries: summary.placed).write(layout: layout)
                let kept =
                    keepingArchive
                    ? try place(
                        completed, named: FileNaming.name(for: asset, contentDisposition: record?.contentDisposition),
                        target: target, record: record, url: asset.url) : nil
                try flushUnpacked(content)
                return kept
            }
        } catch let error as ArchiveError {
            try? TreeRemover.remove(staging)
            throw NewsstandError(
                error.kind == .unsafeEntry || error.kind == .unsupportedEntryType
                    ? .unsafeArchiveEntry
                    : error.kind == .insufficientSpace ? .insufficientSpace : .unpackFailed,
                "cannot unpack \(asset.url.absoluteString) into \(target.issueName.debugDescription): \(error)",
                underlying: error)
        } catch {
            try? TreeRemover.remove(staging)
            throw error
        }
    }

    /// Moves the asset's finished file into the issue's content folder under its own name (or `name (2)`…).
    /// The chosen name goes into the resume record before the move, so a crash between the move and the
    /// catalog write is recognised on resume (``alreadyPlaced(_:id:folder:)``).
    /// - Returns: The name used.
    func placeFile(of asset: AssetDownload, into target: Target, record: ResumeRecord?) throws -> String {
        let name =
            target.fileStem.map { FileNaming.filedName(stem: $0, for: asset, contentType: record?.contentType) }
            ?? FileNaming.name(for: asset, contentDisposition: record?.contentDisposition)
        return try whileListed(target) {
            let folder = layout.contentFolder(target.folderName)
            let folderIsNew = !POSIX.exists(folder)
            try IssueContent.makeFolders(target.folderName, layout: layout)
            let placed = try place(
                layout.completedFile(target.assetID), named: name, target: target, record: record, url: asset.url)
            try flushPlaced(in: folder, folderIsNew: folderIsNew)
            return placed
        }
    }

    /// Whether a crashed run already moved this asset's file into the content folder.
    func alreadyPlaced(_ record: ResumeRecord?, id: String, folder: String) -> Bool {
        guard let record, let placed = record.placedAs, !POSIX.exists(layout.completedFile(id)) else { return false }
        let size = POSIX.fileSize("\(layout.contentFolder(folder))/\(placed)")
        return size != nil && (record.expectedBytes == nil || size == record.expectedBytes)
    }

    /// Whether a finished file is what it claims: a regular file (not a link), of the expected size and
    /// SHA-256 when those are known.
    static func isIntact(_ path: String, expectedBytes: Int64?, sha256: String?) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        if let expectedBytes, Int64(info.st_size) != expectedBytes { return false }
        if let sha256 { return FileDigest.sha256(of: path) == sha256.lowercased() }
        return true
    }

    /// Moves `file` into `folder` under `name`, or `name (2)`, `name (3)`… if taken, never replacing an
    /// existing file (link(2) refuses to). `willPlace` runs before each try with the name about to be used.
    /// - Returns: The name used.
    static func placeFile(
        _ file: String, named name: String, in folder: String, willPlace: (String) throws -> Void = { _ in }
    ) throws -> String {
        var n = 1
        while true {
            let candidate = n == 1 ? name : FileNaming.withSuffix(name, n)
            try willPlace(candidate)
            let target = "\(folder)/\(candidate)"
            if link(file, target) == 0 {
                try POSIX.unlinkIfPresent(file)
                // Placed, and the catalog not yet told: `resume` must find it here (the resume record's name).
                CrashPoint.reached("asset-placed")
                return candidate
            }
            let code = errno
            guard code == EEXIST else { throw NewsstandError.posix(code, "cannot place \(file) as", path: target) }
            // A crash between link and unlink left both names on one inode: finish the move.
            var a = stat()
            var b = stat()
            if stat(file, &a) == 0, stat(target, &b) == 0, a.st_ino == b.st_ino, a.st_dev == b.st_dev {
                try POSIX.unlinkIfPresent(file)
                return candidate
            }
            n += 1
        }
    }

    // MARK: - Steps

    /// Places `file` in the target's content folder, saving each name tried in the resume record first.
    private func place(
        _ file: String, named name: String, target: Target, record: ResumeRecord?, url: URL
    ) throws -> String {
        let recordPath = layout.resumeRecord(target.assetID)
        var updated = record ?? ResumeRecord(url: url.absoluteString)
        return try AssetPlacer.placeFile(file, named: name, in: layout.contentFolder(target.folderName)) { chosen in
            updated.placedAs = chosen
            try updated.save(recordPath)
        }
    }

    /// Runs `body` holding the issue's lock, and only while the issue is still listed and not being
    /// removed: `remove` takes the same lock, so a removed issue's folder is never recreated, and two
    /// assets of one issue never merge into its folder at once.
    private func whileListed<T>(_ target: Target, _ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: layout.issueLock(target.lockName))
        defer { withExtendedLifetime(lock) {} }
        // Only this asset of the record is decoded: a whole 200-asset issue decoded for each of its assets
        // took an eighth of a 200 x 5 MiB run's CPU.
        let standing = try catalog.assetStanding(target.assetID, ofIssueNamed: target.issueName)
        guard let standing, !standing.isBeingRemoved else {
            try? POSIX.unlinkIfPresent(layout.completedFile(target.assetID))
            // Gone or going: its removal deletes the lock file before it commits, so this lock may have made it
            // again; held here, it is this process's to delete (cleanup, best effort; see `FileLock`).
            try? POSIX.unlinkIfPresent(layout.issueLock(target.lockName))
            throw DownloadRun.AssetRemoved()
        }
        return try body()
    }

    /// Fails before unpacking when the archive's content cannot fit: its size from the ZIP central
    /// directory, else (formats that do not declare it up front) the archive's own size as a lower
    /// bound; the extraction itself also stops at the free space, for archives that under-declare.
    /// - Throws: `.insufficientSpace` naming the asset, the issue, the size needed and the free space.
    private func checkSpaceToUnpack(_ archive: String, asset: AssetDownload, issueName: String) throws {
        guard let needed = ZipCentralDirectory.uncompressedSize(path: archive) ?? POSIX.fileSize(archive) else {
            return
        }
        if let figures = FreeSpace.shortfall(needing: needed, at: layout.staging) {
            throw NewsstandError(
                .insufficientSpace,
                FreeSpace.message(
                    "to unpack \(asset.url.absoluteString) into \(issueName.debugDescription)", needing: needed,
                    figures: figures, path: layout.root))
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
