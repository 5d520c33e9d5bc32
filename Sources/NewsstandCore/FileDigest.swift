import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The one way the library hashes a file: SHA-256, streamed in 1 MiB reads, never through a symbolic link
/// (a link in an issue's folder or the download area is not the file that was downloaded).
package enum FileDigest {
    /// The digest of a file's first `bytes` bytes (all of it when nil), to be continued by the caller.
    package static func sha256Hasher(of path: String, bytes: Int64? = nil) throws -> SHA256 {
        var hasher = SHA256()
        if let bytes, bytes <= 0 { return hasher }
        let fd = try POSIX.open(path, O_RDONLY | O_NOFOLLOW)
        defer { _ = close(fd) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var remaining = bytes ?? .max
        while remaining > 0 {
            let n = try POSIX.call("cannot read", path: path) {
                read(fd, buffer.baseAddress, Int(min(Int64(chunk), remaining)))
            }
            if n == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            remaining -= Int64(n)
        }
        return hasher
    }

    /// The lowercase hex SHA-256 of a whole file; nil when it cannot be read (or is a link).
    package static func sha256(of path: String) -> String? {
        guard let hasher = try? sha256Hasher(of: path) else { return nil }
        return hex(hasher.finalize())
    }

    /// Lowercase hex, as catalogs and `--sha256` write digests.
    package static func hex(_ digest: some Sequence<UInt8>) -> String {
        var text = ""
        text.reserveCapacity(64)
        for byte in digest {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return text
    }

    private static let hexDigits = Array("0123456789abcdef")
}
