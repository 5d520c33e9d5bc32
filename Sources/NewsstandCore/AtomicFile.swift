internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file replacement that a crash at any instant cannot leave half-written: write a temporary
/// file beside the target, fsync it, rename it over the target, fsync the folder.
package enum AtomicFile {
    /// Replaces the file at `path` with `data`.
    /// - Parameters:
    ///   - durable: Whether to fsync the file and its folder. Either way a reader sees the old or the new
    ///     content, never a mix; only a power cut can lose a non-durable write.
    ///   - flushingFolder: False when the caller flushes the folder itself, once for several files.
    ///   - mode: The new file's permissions (before the umask): 0600 for a file of secrets, which is then
    ///     never readable by others, not even for an instant.
    /// - Throws: `NewsstandError` (`.diskFull` when space runs out); the old file is then untouched.
    package static func write(
        _ data: Data, to path: String, durable: Bool = true, flushingFolder: Bool = true, mode: UInt32 = 0o644
    ) throws {
        try write(data, to: path, durable: durable, flushingFolder: flushingFolder, mode: mode, crashPoint: nil)
    }

    /// ``write(_:to:durable:flushingFolder:mode:)``, where a debug build dies (``CrashPoint``) at `crashPoint`
    /// with the temporary file written and not yet renamed: for the tests of what a killed writer leaves.
    package static func write(
        _ data: Data, to path: String, durable: Bool = true, flushingFolder: Bool = true, mode: UInt32 = 0o644,
        crashPoint: StaticString?
    ) throws {
        let temporary = LibraryLayout.temporary(beside: path)
        let fd = try POSIX.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: mode_t(mode))
        var closed = false
        do {
            try data.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: temporary) }
            if durable { try POSIX.fsync(fd, path: temporary) }
            closed = true
            _ = close(fd)
            if let crashPoint { CrashPoint.reached(crashPoint) }
            try POSIX.rename(temporary, path)
        } catch {
            if !closed { _ = close(fd) }
            _ = unlink(temporary)
            throw error
        }
        if durable && flushingFolder { try POSIX.fsyncDirectory((path as NSString).deletingLastPathComponent) }
    }

    /// Reads the whole file, or returns nil when it does not exist.
    /// - Parameter limit: The largest size read; a larger file (a 64 GiB sparse `config.json`) is refused with an
    ///   error naming it and its size, instead of a buffer of its size.
    package static func read(_ path: String, limit: Int64? = nil) throws -> Data? {
        // O_NONBLOCK: a FIFO in a file's place fails the read instead of blocking it (regular files ignore it).
        guard let fd = try POSIX.openIfExists(path, O_RDONLY | O_NONBLOCK) else { return nil }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        if let limit, Int64(info.st_size) > limit {
            throw NewsstandError(
                .io, "\(path) is \(ByteFormat.binary(Int64(info.st_size))), more than the \(ByteFormat.binary(limit)) such a file may be; it was not read")
        }
        var data = Data(count: Int(info.st_size))
        var total = 0
        try data.withUnsafeMutableBytes { buffer in
            while total < buffer.count {
                let n = try POSIX.call("cannot read", path: path) {
                    Glibc.read(fd, buffer.baseAddress.map { $0 + total }, buffer.count - total)
                }
                if n == 0 { break }
                total += n
            }
        }
        if total < data.count { data.removeSubrange(total...) }
        return data
    }
}
