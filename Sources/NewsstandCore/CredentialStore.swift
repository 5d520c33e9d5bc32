import Foundation
internal import CSystemShims  // `struct stat` and its members
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The library's secrets, in one file only its owner can read (`LIBRARY/.credentials.json`, mode 0600):
/// the passwords taken out of feed and asset URLs (keyed by origin, sent only to that origin) and the
/// request headers of each subscription's feed (`subscribe --header`). The catalog and the subscription
/// records, which others may read, keep the URLs without their passwords.
///
/// ```
/// {"version": 1, "origins": {"https://host:443": {"user": "u", "password": "p"}},
///  "feedHeaders": {"<subscription id>": {"Cookie": "…"}}}
/// ```
/// One value serves every download of a process. It re-reads the file only when the file changed (one
/// `stat` per lookup), so it sees what another process, or another value in this one, stored. Changes are
/// made under the catalog's lock (``update(_:)``'s callers hold it), so two processes lose none.
package final class CredentialStore: Sendable {
    package struct Contents: Codable, Sendable, Equatable {
        package var version = 1
        package var origins: [String: Credential] = [:]
        package var feedHeaders: [String: [String: String]] = [:]

        package init() {}
    }

    /// What was read and the file's identity then (inode, size, change time): a different identity means
    /// the file was replaced.
    private struct Loaded: Sendable {
        var identity: [Int]
        var contents: Contents
    }

    package let path: String
    private let loaded = Mutex<Loaded?>(nil)
    /// Credentials used by this process only, never stored: a `subscribe` fetches its feed before it
    /// records anything.
    private let remembered = Mutex<[String: Credential]>([:])

    package init(path: String) {
        self.path = path
    }

    package convenience init(layout: LibraryLayout) {
        self.init(path: layout.credentials)
    }

    /// The credential for `url`'s origin: the URL's own `user:pass@` first, else one remembered by this
    /// process, else the stored one.
    package func credential(for url: URL) -> Credential? {
        if let inline = URLCredentials.split(url).credential { return inline }
        let origin = URLCredentials.origin(of: url)
        if let credential = remembered.withLock({ $0[origin] }) { return credential }
        return contents().origins[origin]
    }

    /// The stored headers of a subscription's feed.
    package func feedHeaders(subscription id: String) -> [String: String] {
        contents().feedHeaders[id] ?? [:]
    }

    /// Uses `credential` for `url`'s origin in this process, without storing it.
    package func remember(_ credential: Credential, forOriginOf url: URL) {
        remembered.withLock { $0[URLCredentials.origin(of: url)] = credential }
    }

    /// Changes the file (read afresh, so another process's entries stay) and writes it back, 0600. Call
    /// under the catalog's lock. Writes nothing when nothing changed.
    /// - Throws: `NewsstandError` when the file cannot be read or written; nothing changes then.
    package func update(_ change: (inout Contents) -> Void) throws {
        var contents = try Self.read(path)?.contents ?? Contents()
        let before = contents
        change(&contents)
        guard contents != before else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(encoder.encode(contents), to: path, mode: 0o600)
        loaded.withLock { $0 = nil }  // the next lookup reads what was written, with its new identity
    }

    /// Takes the passwords out of `requests`' URLs and stores them by origin: what a catalog record then
    /// holds is the URL with its user name only. Call under the catalog's lock.
    package func separating(_ requests: [AssetRequest]) throws -> [AssetRequest] {
        var found: [String: Credential] = [:]
        let stripped = requests.map { request -> AssetRequest in
            let (url, credential) = URLCredentials.split(request.url)
            guard let credential else { return request }
            found[URLCredentials.origin(of: request.url)] = credential
            var request = request
            request.url = url
            return request
        }
        if !found.isEmpty { try update { $0.origins.merge(found) { _, new in new } } }
        return stripped
    }

    private func contents() -> Contents {
        let identity = Self.identity(path)
        if let current = loaded.withLock({ $0 }), current.identity == identity { return current.contents }
        // An unreadable file sends no credentials (the server's 401 then says so); it is never overwritten
        // here, and `update` reports it.
        let fresh = (try? Self.read(path)).flatMap { $0 } ?? Loaded(identity: identity, contents: Contents())
        loaded.withLock { $0 = fresh }
        return fresh.contents
    }

    private static func identity(_ path: String) -> [Int] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [] }
        return [Int(info.st_ino), Int(info.st_size), Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec)]
    }

    private static func read(_ path: String) throws -> Loaded? {
        let identity = identity(path)
        guard let data = try AtomicFile.read(path) else { return nil }
        do {
            return Loaded(identity: identity, contents: try JSONDecoder().decode(Contents.self, from: data))
        } catch {
            throw NewsstandError(.manifestUnreadable, "cannot read the credentials file \(path): \(error)")
        }
    }
}
