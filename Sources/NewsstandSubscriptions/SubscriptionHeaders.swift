import NewsstandCore
import Synchronization

/// Subscription records read without their items, remembered by file identity (inode, size, modification
/// time) for the life of the process. A duplicate check or a lookup by name needs every record's name
/// and URLs; with 1,000 subscriptions of hundreds of items each, reading the whole records made each
/// `subscribe` in a long-running process (the service, the server) cost a full parse of the library's
/// feeds. A record is replaced by rename, so a changed one has a new identity and is read again.
final class SubscriptionHeaders: Sendable {
    static let shared = SubscriptionHeaders()

    private struct Entry {
        var identity: [Int]
        var header: Subscription
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The header of the record at `path`, from memory when the file is the one read last time.
    func header(at path: String, read: (String) throws -> Subscription?) rethrows -> Subscription? {
        let identity = POSIX.changeIdentity(path)
        if !identity.isEmpty, let entry = entries.withLock({ $0[path] }), entry.identity == identity {
            return entry.header
        }
        guard let header = try read(path) else {
            forget([path])
            return nil
        }
        // Kept only when the file did not change while it was read.
        if !identity.isEmpty, POSIX.changeIdentity(path) == identity {
            entries.withLock { $0[path] = Entry(identity: identity, header: header) }
        }
        return header
    }

    /// Drops the entries of records that are gone, so the cache holds no more than the folders list.
    func forget(_ paths: some Sequence<String>) {
        entries.withLock { entries in
            for path in paths { entries[path] = nil }
        }
    }

    /// Paths remembered under `folder`.
    func paths(under folder: String) -> [String] {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return entries.withLock { $0.keys.filter { $0.hasPrefix(prefix) } }
    }
}
