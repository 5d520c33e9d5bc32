import Foundation
import Synchronization

// `struct stat` reaches Swift through libarchive's headers, so its members need this import too.
internal import CLibArchive

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
    private let cache = Mutex<(stamp: Stamp, manifest: Manifest)?>(nil)

    init(layout: LibraryLayout) {
        self.layout = layout
    }

    /// Loads the manifest without locking (the file is only ever replaced by `rename`, so a reader
    /// sees either the old or the new document). A missing file is an empty library.
    func load() throws -> Manifest {
        guard let stamp = currentStamp() else {
            if POSIX.exists(layout.manifest) { _ = try AtomicFile.read(layout.manifest) }  // surfaces the real error
            return Manifest()
        }
        if let cached = cache.withLock({ $0 }), cached.stamp == stamp { return cached.manifest }
        guard let data = try AtomicFile.read(layout.manifest) else { return Manifest() }
        let manifest = try Manifest.decode(data, path: layout.manifest)
        // Cache only if the file did not change while it was being read.
        if currentStamp() == stamp { cache.withLock { $0 = (stamp, manifest) } }
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
        if manifest != original {
            manifest.version = Manifest.currentVersion
            try AtomicFile.write(try manifest.encoded(), to: layout.manifest)
            if let stamp = currentStamp() {
                let written = manifest
                cache.withLock { $0 = (stamp, written) }
            }
        }
        _ = consume lock
        return (result, manifest)
    }

    private func currentStamp() -> Stamp? {
        var info = stat()
        guard stat(layout.manifest, &info) == 0 else { return nil }
        return Stamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }
}
