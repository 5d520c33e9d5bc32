internal import CSystemShims

#if canImport(Glibc)
    import Glibc
#endif

/// The lock held by the one process (and task) downloading, placing or removing an asset: one byte of the
/// library's `.downloads/asset-locks` file, at an offset derived from the asset's id, locked with an
/// open-file-description lock (`F_OFD_SETLK`). Like ``FileLock``'s `flock`, it is exclusive per descriptor
/// (two tasks of one process exclude each other), only ever tried, and dropped by the kernel when the
/// process dies.
///
/// Why a byte and not a file per asset: a lock file was a new inode and an unlink per asset. On ext4
/// without a journal every new inode steps over the inodes freed in the last minute, and in a run of
/// 200 small assets creating files took about a third of the CPU (`perf record -a`). The shared file is
/// created once and never deleted: a process that deleted and re-created it would lock another inode
/// than a process still holding the old one.
///
/// Blocking: call off the Swift concurrency pool.
package final class AssetLock: Sendable {
    private let fd: Int32

    private init(descriptor: Int32) {
        fd = descriptor
    }

    deinit {
        _ = close(fd)
    }

    /// Takes asset `id`'s lock if no one holds it, without waiting. The download folder must exist.
    ///
    /// - Returns: The lock, or nil when another holder has it.
    /// - Throws: ``NewsstandError`` naming the lock file when it cannot be opened or locked.
    package static func `try`(_ id: String, layout: LibraryLayout) throws -> AssetLock? {
        try `try`(all: [id], layout: layout)
    }

    /// Takes the locks of every asset in `ids` on one descriptor (an issue's assets, for its removal), or
    /// none of them when another holder has one.
    package static func `try`(all ids: [String], layout: LibraryLayout) throws -> AssetLock? {
        let path = layout.assetLocks
        let fd = try POSIX.open(path, O_RDWR | O_CREAT | O_NOFOLLOW)  // never a file elsewhere, through a link
        for id in ids {
            if POSIX.retrying({ newsstand_try_lock_byte(fd, offset(of: id)) }) != 0 {
                let code = errno
                _ = close(fd)  // drops the bytes locked so far
                if code == EAGAIN || code == EACCES { return nil }
                throw NewsstandError.posix(code, "cannot lock", path: path)
            }
        }
        return AssetLock(descriptor: fd)
    }

    /// Whether someone (another process, or another descriptor in this one) holds asset `id`'s lock,
    /// without creating anything or keeping a lock: for dry runs and reports, which must change nothing.
    package static func isHeld(_ id: String, layout: LibraryLayout) -> Bool {
        Probe(layout: layout).isHeld(id)
    }

    /// ``isHeld(_:layout:)`` for many assets on one descriptor: a plan over 100,000 issues opened the lock
    /// file once per asset.
    /// Not `Sendable`: one caller's loop.
    package final class Probe {
        private let path: String
        private var fd: Int32 = -1
        /// When the file was last found missing (monotonic nanoseconds).
        private var missingSince: UInt64?

        package init(layout: LibraryLayout) { path = layout.assetLocks }

        deinit { if fd >= 0 { _ = close(fd) } }

        package func isHeld(_ id: String) -> Bool {
            // Opened again while missing, at most every 10 ms: a first download may make the file while the caller
            // walks, but a failed open per asset was 8 % of a 100,000-issue prune plan in a library that never
            // downloaded (what is removed is locked again by the real run, so the plan may be that much late).
            if fd < 0 {
                var clock = timespec()
                clock_gettime(CLOCK_MONOTONIC, &clock)
                let now = UInt64(clock.tv_sec) &* 1_000_000_000 &+ UInt64(clock.tv_nsec)
                if let missingSince, now &- missingSince < 10_000_000 { return false }
                fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                missingSince = fd < 0 ? now : nil
            }
            guard fd >= 0 else { return false }  // no lock file: no one has ever locked an asset here
            return POSIX.retrying { newsstand_byte_is_locked(fd, AssetLock.offset(of: id)) } == 1
        }
    }

    /// The byte standing for asset `id`: FNV-1a (64-bit) of the id, kept below 2^62 so that it is a valid
    /// positive offset. Two ids sharing a byte would only make one of them wait for the other's run
    /// (it is skipped as "in another process"); among the few assets locked at once that chance is
    /// about n² / 2^63.
    static func offset(of id: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int64(hash & (1 << 62 - 1))
    }
}
