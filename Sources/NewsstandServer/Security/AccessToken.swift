import Foundation
import NewsstandCore

/// The token that `issues serve` asks for when it listens beyond loopback: generated once per library,
/// stored 0600 in `.serve-token`, shown once (when it is made).
enum AccessToken {
    /// The library's token, made now when it has none.
    /// - Returns: The token, and whether it was made by this call (so the caller shows it once).
    /// - Throws: `NewsstandError` when the file cannot be read or written.
    static func loadOrCreate(_ layout: LibraryLayout) throws -> (token: String, created: Bool) {
        if let data = try AtomicFile.read(layout.serveToken) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if token.count >= 32 { return (token, false) }
        }
        let token = randomHex(bytes: 32)
        try AtomicFile.write(Data((token + "\n").utf8), to: layout.serveToken, mode: 0o600)
        return (token, true)
    }

    /// `bytes` random bytes from the system's generator, as hex.
    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Compares two secrets in time that does not depend on where they differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
