package import CSystemShims  // `struct stat` and its members (<sys/stat.h>)

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers that turn C return codes into `NewsstandError`s naming the path, retrying `EINTR`
/// (the swift-system `valueOrErrno` pattern).
///
/// The one path from `errno` to an error: ``call(_:path:_:)`` (or, where a call has no `-1` convention,
/// ``NewsstandError/posix(_:_:path:)`` directly) keeps the value in ``NewsstandError/errno``, and
/// ``describe(_:)`` is the one place its words come from (archive code uses it through ``ArchiveError/system``).
package enum POSIX {
    /// Calls `body` until it stops failing with `EINTR`; a `-1` result throws, naming `operation` and `path`.
    @discardableResult
    package static func call<T: FixedWidthInteger>(_ operation: String, path: String, _ body: () -> T) throws -> T {
        let result = retrying(body)
        if result != -1 { return result }
        throw NewsstandError.posix(errno, operation, path: path)
    }

    /// Calls `body` again while it fails with `EINTR` (a `-1` result); returns its last result, with `errno` as
    /// it left it. The one EINTR loop of the package: the throwing wrappers above and every other call use it.
    package static func retrying<T: FixedWidthInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result == -1, errno == EINTR { continue }
            return result
        }
    }

    /// Reads `buffer.count` bytes at `offset`, stopping early only at the end of the file: the bytes read,
    /// or -1 with `errno` set.
    package static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        var done = 0
        while done < buffer.count {
            let n = retrying { Glibc.pread(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(offset) + off_t(done)) }
            if n < 0 { return -1 }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes`: nil when done, else the `errno` of the failure (`EPIPE` when the reader left),
    /// for callers that decide per errno; ``writeAll(_:_:path:)`` throws instead.
    package static func writeAllOrErrno(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let n = retrying { Glibc.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset) }
            if n < 0 { return errno }
            if n == 0 { return EIO }
            offset += n
        }
        return nil
    }

    /// Like ``call(_:path:_:)``, but a failure with `expected` returns nil instead of throwing (`ENOENT` for
    /// "if it exists", `EWOULDBLOCK` for a lock held elsewhere).
    static func call<T: FixedWidthInteger>(
        _ operation: String, path: String, unlessFailingWith expected: Int32, _ body: () -> T
    ) throws -> T? {
        let result = retrying(body)
        if result != -1 { return result }
        let code = errno
        if code == expected { return nil }
        throw NewsstandError.posix(code, operation, path: path)
    }

    /// What an `errno` value means, in the C library's words (`strerror`), such as "No space left on device".
    package static func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }

    /// Opens `path`. The corresponding C function is `open`.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        try call("cannot open", path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// Opens `path`, or returns nil when it does not exist. The corresponding C function is `open`.
    package static func openIfExists(_ path: String, _ flags: Int32) throws -> Int32? {
        try call("cannot open", path: path, unlessFailingWith: ENOENT) { Glibc.open(path, flags | O_CLOEXEC, 0) }
    }

    /// Writes every byte of `buffer` at the current offset. The corresponding C function is `write`.
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        if let code = writeAllOrErrno(fd, buffer) { throw NewsstandError.posix(code, "cannot write", path: path) }
    }

    /// Flushes `fd` to stable storage. The corresponding C function is `fsync`.
    package static func fsync(_ fd: Int32, path: String) throws {
        try call("cannot fsync", path: path) { Glibc.fsync(fd) }
    }

    /// Flushes a file's data to stable storage by path.
    package static func fsyncFile(_ path: String) throws {
        let fd = try open(path, O_RDONLY)
        defer { _ = Glibc.close(fd) }
        try fsync(fd, path: path)
    }

    /// Flushes a directory entry change (a rename or create inside `directory`) to stable storage.
    package static func fsyncDirectory(_ directory: String) throws {
        let fd = try open(directory, O_RDONLY | O_DIRECTORY)
        defer { _ = Glibc.close(fd) }
        try fsync(fd, path: directory)
    }

    /// Renames atomically. The corresponding C function is `rename`.
    package static func rename(_ from: String, _ to: String) throws {
        try call("cannot rename \(from) to", path: to) { Glibc.rename(from, to) }
    }

    /// Creates a directory; an existing directory is fine.
    package static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
        if Glibc.mkdir(path, mode) == 0 { return }
        let code = errno
        var info = stat()
        if code == EEXIST, lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
        throw NewsstandError.posix(code, "cannot create folder", path: path)
    }

    /// The size of the file at `path`, or nil when it does not exist.
    package static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The status of `path` itself (a link is not followed), or nil when there is nothing there.
    package static func linkStatus(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    /// Whether `info` is of a plain file with no other name. The library's own small files (resume records,
    /// the intent, saved-download anchors) are only written or emptied in place when they are: through a
    /// second name (a hard link planted to a file elsewhere) the write would reach that file too.
    package static func isSoleFile(_ info: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFREG && info.st_nlink == 1
    }

    /// Opens `path` (never through a link; a FIFO does not block the open) when it is a plain file with no
    /// other name (``isSoleFile(_:)``), creating it if `flags` say so.
    /// - Returns: The descriptor and the file's status, or nil (nothing left open) for anything else, or when
    ///   it cannot be opened.
    package static func openSoleFile(_ path: String, _ flags: Int32, mode: mode_t = 0o644) -> (fd: Int32, info: stat)? {
        let fd = Glibc.open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, isSoleFile(info) else {
            _ = Glibc.close(fd)
            return nil
        }
        return (fd, info)
    }

    /// What a "has this file changed?" cache compares: inode, size and modification time to the nanosecond
    /// (following links); empty when the file cannot be read.
    package static func changeIdentity(_ path: String) -> [Int] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [] }
        return [Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
    }

    /// Hands memory that malloc keeps after frees back to the system (`malloc_trim(3)`): after a phase that
    /// went through large temporary buffers, so that what comes next does not sit on top of them.
    package static func returnFreedMemory() {
        newsstand_return_freed_memory()
    }

    /// At most `count` malloc arenas from now on (glibc's `M_ARENA_MAX`; by default up to eight a core): each
    /// thread that allocates under contention gets one, and their free space is memory the process keeps.
    package static func limitMallocArenas(_ count: Int32) {
        newsstand_limit_malloc_arenas(count)
    }

    /// Calls `body` with `posix_spawn` attributes for a child of ours: a process group of its own (a Ctrl-C meant
    /// for us, or a kill of its group, is aimed at it alone), no blocked signal, and the signals this process
    /// ignores or catches (SIGPIPE, SIGXFSZ, SIGINT, SIGTERM, SIGHUP) back at their defaults: an ignored
    /// disposition survives exec. The one setup of every child we start (hooks, the cover worker).
    package static func withChildSpawnAttributes<T>(_ body: (inout posix_spawnattr_t) -> T) -> T {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGXFSZ, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        return body(&attributes)
    }

    /// Whether a process with this PID exists (it may be another program that reused the PID).
    package static func isRunning(_ pid: pid_t) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH)
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Removes a file; a missing file is fine.
    package static func unlinkIfPresent(_ path: String) throws {
        _ = try call("cannot delete", path: path, unlessFailingWith: ENOENT) { Glibc.unlink(path) }
    }
}
