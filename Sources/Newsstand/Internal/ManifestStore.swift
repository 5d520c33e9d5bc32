// `struct stat` reaches Swift through libarchive's headers, so its members need this import too.
internal import CLibArchive
import Foundation
import Synchronization

/// Reads and writes `library.json`. Every change is a read-modify-write under the library's file
/// lock, so concurrent processes never lose each other's changes. Blocking: call off the
/// concurrency pool.
///
/// The last manifest read or written is kept with the file's identity (inode, size, mtime): a large
/// library is decoded again only when another process has replaced the file since.
final class ManifestStore: Sendable {
    let layout: LibraryLayout

    private struct Stamp: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }
    /// The cached manifest, its file's identity, and an open descriptor of that file: holding it open
    /// keeps the kernel from reusing the inode number, so a later file can never look like this one.
    private let cache = Mutex<(stamp: Stamp, manifest: Manifest, fd: Int32)?>(nil)

    init(layout: LibraryLayout) {
        self.layout = layout
    }

    /// Loads the manifest without locking (the file is only ever replaced by `rename`, so a reader
    /// sees either the old or the new document). A missing file is an empty library.
    func load() throws -> Manifest {
        guard let stamp = try currentStamp() else { return Manifest() }
        if let cached = cache.withLock({ $0.map { ($0.stamp, $0.manifest) } }), cached.0 == stamp { return cached.1 }
        let fd = try POSIX.open(layout.manifest, O_RDONLY)
        var opened = stat()
        guard fstat(fd, &opened) == 0, UInt64(opened.st_ino) == stamp.inode else {
            _ = close(fd)
            return try load()  // replaced between stat and open: start over
        }
        let data: Data
        do {
            data = try AtomicFile.read(layout.manifest) ?? Data()
        } catch {
            _ = close(fd)
            throw error
        }
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(data, path: layout.manifest)
        } catch {
            _ = close(fd)
            throw error
        }
        // Cache only if the file did not change while it was being read.
        if (try? currentStamp()) == stamp { remember(stamp, manifest, fd) } else { _ = close(fd) }
        return manifest
    }

    /// Applies `body` to the current manifest under the lock and writes the result if it changed.
    /// If `body` throws, nothing is written.
    /// - Returns: `body`'s result and the manifest as it now stands on disk.
    func update<T>(_ body: (inout Manifest) throws -> T) throws -> (T, Manifest) {
        let lock = try FileLock(path: layout.lockFile)
        let original = try load()
        var manifest = original
        let result = try body(&manifest)
        // Statuses are derived from asset states and the in-flight list; recomputing them here, the one
        // place every change passes, keeps them right whatever the change touched.
        manifest.updateStatuses()
        if manifest != original {
            manifest.version = Manifest.currentVersion
            try AtomicFile.write(try manifest.encoded(), to: layout.manifest)
            let fd = try POSIX.open(layout.manifest, O_RDONLY)
            if let stamp = try currentStamp() { remember(stamp, manifest, fd) } else { _ = close(fd) }
        }
        _ = consume lock
        return (result, manifest)
    }

    deinit {
        if let fd = cache.withLock({ $0?.fd }) { _ = close(fd) }
    }

    private func remember(_ stamp: Stamp, _ manifest: Manifest, _ fd: Int32) {
        let old = cache.withLock { cache -> Int32? in
            defer { cache = (stamp, manifest, fd) }
            return cache?.fd
        }
        if let old { _ = close(old) }
    }

    /// The manifest file's identity, or nil when there is none yet (any other failure is an error).
    private func currentStamp() throws -> Stamp? {
        var info = stat()
        guard stat(layout.manifest, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw NewsstandError.posix(errno, "cannot read", path: layout.manifest)
        }
        return Stamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }
}
