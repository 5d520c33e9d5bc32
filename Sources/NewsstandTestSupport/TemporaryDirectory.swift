import Crypto
import Foundation
internal import NewsstandCore  // TreeRemover, FileDigest

/// A fresh folder under the system's temporary directory, deleted when `body` returns or throws.
public func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = try makeTemporaryDirectory()
    defer { try? TreeRemover.remove(url.path) }  // cleanup: a failure to delete must not fail the test
    return try await body(url)
}

/// `withTemporaryDirectory` for synchronous tests.
public func withTemporaryDirectorySync<T>(_ body: (URL) throws -> T) throws -> T {
    let url = try makeTemporaryDirectory()
    defer { try? TreeRemover.remove(url.path) }
    return try body(url)
}

/// Creates a fresh, empty folder for one test. The caller deletes it.
public func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("newsstand-tests-\(UUID().uuidString.prefix(12))", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    // Resolve symlinks (e.g. /tmp on some systems) so path comparisons in tests are exact.
    return url.resolvingSymlinksInPath()
}

/// The SHA-256 of `bytes` as lowercase hex, for fixtures and comparisons.
public func sha256Hex(_ bytes: some Sequence<UInt8>) -> String {
    FileDigest.hex(SHA256.hash(data: Array(bytes)))
}

/// Deterministic pseudo-random bytes (xorshift), so large fixtures need no stored files.
public func patternBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed == 0 ? 1 : seed
    var out = [UInt8](repeating: 0, count: count)
    var i = 0
    while i < count {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        var word = state
        for _ in 0..<8 where i < count {
            out[i] = UInt8(truncatingIfNeeded: word)
            word >>= 8
            i += 1
        }
    }
    return out
}
