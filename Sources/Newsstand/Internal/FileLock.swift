#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive advisory lock (`flock`) on a file, serialising manifest writers across processes.
///
/// Each holder opens its own descriptor, so two threads of one process exclude each other too.
/// Blocking: call it off the Swift concurrency pool.
struct FileLock: ~Copyable {
    private let fd: Int32

    /// Opens (creating) `path` and waits until the exclusive lock is held.
    init(path: String) throws {
        let fd = try POSIX.open(path, O_RDWR | O_CREAT)
        do {
            try POSIX.call("cannot lock", path: path) { flock(fd, LOCK_EX) }
        } catch {
            _ = close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit {
        // Closing the descriptor releases the lock; the kernel also drops it if the process dies.
        _ = close(fd)
    }
}
