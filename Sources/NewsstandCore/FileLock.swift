internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive advisory lock (`flock`) on a file, held for the life of the value and released when it is
/// destroyed (closing the descriptor releases it; the kernel also drops it if the process dies).
///
/// The library's and each issue's lock are waited for (``init(path:)``): they serialise catalog writers and
/// the placing of content across processes. An asset's lock is only tried (``try(path:)``): a download that
/// finds it held leaves that asset to the process holding it. Each holder opens its own descriptor, so two
/// threads of one process exclude each other too.
///
/// A lock file may be deleted, but only by a process holding its lock (a removal deletes its issue's). Every
/// taker checks, once it holds the lock, that the path still names the file it locked, and starts over on
/// the path otherwise: one that opened the file just before the deletion and locked it just after would
/// else hold a lock that no one else can see, beside a holder of the new file.
///
/// A class, not a `~Copyable` struct, so that a lock taken by ``runBlocking(_:)`` can be handed back out of it.
/// Blocking: call both off the Swift concurrency pool.
package final class FileLock: Sendable {
    private let fd: Int32

    /// Opens (creating) `path` and waits until the lock is held: exclusive, or shared with other shared
    /// holders (``Trash``: every removal shares it, a sweep needs it alone).
    ///
    /// - Throws: ``NewsstandError`` naming `path` when it cannot be opened or locked.
    package init(path: String, shared: Bool = false) throws {
        while true {
            let fd = try POSIX.open(path, O_RDWR | O_CREAT)
            do {
                try POSIX.call("cannot lock", path: path) { flock(fd, shared ? LOCK_SH : LOCK_EX) }
            } catch {
                _ = close(fd)
                throw error
            }
            if FileLock.isCurrent(fd, path: path) {
                self.fd = fd
                return
            }
            _ = close(fd)  // deleted by its holder meanwhile: lock the file the path names now
        }
    }

    private init(descriptor: Int32) {
        fd = descriptor
    }

    /// Opens (creating) `path` and takes the exclusive lock if no one holds it, without waiting.
    ///
    /// - Returns: The lock, or nil when another holder has it.
    /// - Throws: ``NewsstandError`` naming `path` when it cannot be opened or locked.
    package static func `try`(path: String) throws -> FileLock? {
        while true {
            let fd = try POSIX.open(path, O_RDWR | O_CREAT)
            do {
                let held = try POSIX.call("cannot lock", path: path, unlessFailingWith: EWOULDBLOCK) {
                    flock(fd, LOCK_EX | LOCK_NB)
                }
                guard held != nil else {
                    _ = close(fd)
                    return nil
                }
            } catch {
                _ = close(fd)
                throw error
            }
            if isCurrent(fd, path: path) { return FileLock(descriptor: fd) }
            _ = close(fd)
        }
    }

    /// Whether `path` still names the file open on `fd` (the same device and inode; `stat` follows a link, as
    /// `open` did). When either cannot be read the answer is yes: the lock is kept, as before this check.
    private static func isCurrent(_ fd: Int32, path: String) -> Bool {
        var held = stat()
        guard fstat(fd, &held) == 0 else { return true }
        var named = stat()
        guard stat(path, &named) == 0 else { return errno != ENOENT }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// Whether someone (another process, or another descriptor in this one) holds the lock on `path`,
    /// without creating the file or keeping the lock: a missing file is not held. For dry runs and
    /// reports, which must change nothing.
    package static func isHeld(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { _ = close(fd) }
        if POSIX.retrying({ flock(fd, LOCK_EX | LOCK_NB) }) == 0 { return false }  // closing the descriptor releases it
        return errno == EWOULDBLOCK
    }

    deinit {
        _ = close(fd)
    }
}
