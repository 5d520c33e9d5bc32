#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking exclusive `flock` that keeps two processes from downloading one asset into the same
/// partial file. Released when the value is destroyed (or the process dies).
final class AssetLock: Sendable {
    private let fd: Int32

    /// Takes the lock, or returns nil when another process holds it.
    init?(tryPath path: String) throws {
        let fd = try POSIX.open(path, O_RDWR | O_CREAT)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            _ = close(fd)
            if code == EWOULDBLOCK { return nil }
            throw NewsstandError.posix(code, "cannot lock", path: path)
        }
        self.fd = fd
    }

    deinit {
        _ = close(fd)
    }
}
