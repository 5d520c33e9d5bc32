internal import CSystemShims  // syncfs(2)
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Flushing what was placed before the catalog says so: after a power cut a record saying `unpacked` or
/// `downloaded` never points at files or names the disk lost (the archive is deleted right after the
/// `unpacked` commit, so nothing could unpack it again). Skipped with `--no-fsync`, as the downloads' flush is.
extension AssetPlacer {
    /// Flushes an unpacked tree: its files, its folders' entries and the content record, with one
    /// `syncfs(2)` of the library's file system.
    ///
    /// Chosen over an `fsync` of each file and folder by measurement (1,000 small files as in the bench's
    /// unpack row, medians of 3, 2026-11-26, a 2-core machine shared with three builds): on the ext4 disk,
    /// `syncfs` 0.52 s, writeback started on every file and then an `fsync` each 4.9 s, a plain `fsync`
    /// each 13.6 s; on tmpfs (where the bench unpacks) 0 ms against 12–16 ms. On the bench's unpack row
    /// (`--quick --runs 3`, release build, beside a soak run) it is lost in the noise on tmpfs (download with
    /// unpack 169 ms, 165 ms with `--no-fsync`) and costs about a quarter second on ext4 (`--unpack-on-disk`:
    /// 733 ms against 485 ms). Its cost is the file system's other unwritten data too, which the catalog's
    /// batched commits already accept. Blocking.
    func flushUnpacked(_ folder: String) throws {
        guard flushes else { return }
        let fd = try POSIX.open(folder, O_RDONLY | O_DIRECTORY)
        defer { _ = close(fd) }
        try POSIX.call("cannot flush", path: folder) { newsstand_syncfs(fd) }
    }

    /// Flushes the folder entry of a file placed in `folder` (the file's bytes were flushed before it was
    /// renamed to `.done`), and, when the folder was created for it, the entries of the folders above it up to
    /// the library's (a template's `Podcast/2026` may have made more than one). Blocking.
    func flushPlaced(in folder: String, folderIsNew: Bool) throws {
        guard flushes else { return }
        try POSIX.fsyncDirectory(folder)
        guard folderIsNew else { return }
        var parent = (folder as NSString).deletingLastPathComponent
        while parent.hasPrefix(layout.root) {
            try POSIX.fsyncDirectory(parent)
            if parent == layout.root { break }
            parent = (parent as NSString).deletingLastPathComponent
        }
    }
}
