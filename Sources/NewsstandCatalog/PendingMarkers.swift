internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The saved list of pending downloads on disk: `.catalog/pending/<asset id>`, one name per asset, that
/// gives the key of the asset's issue.
///
/// A marker is a hard link to its issue's anchor, `.catalog/pending/.issue-<key>` (a file holding the
/// key), which is made with the first marker and deleted with its last. A link makes no inode: a
/// symlink per asset did, and on ext4 without a journal every new inode steps over every inode freed in
/// the last minute; marking 200 assets took 40–200 ms before the first byte of a run, after a clean-up.
/// A marker that is a symlink whose target is the key (what earlier versions made, and the fallback
/// where links cannot be made) is read too. Called with the lock held, except the reads.
extension Catalog {
    static let anchorPrefix = ".issue-"

    /// The saved list of pending downloads: asset identifier → issue key.
    package func pendingMarkers() throws -> [(id: String, key: String)] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: layout.pending)
        } catch CocoaError.fileReadNoSuchFile {
            return []
        } catch {
            throw NewsstandError(.io, "cannot read \(layout.pending): \(error.localizedDescription)", underlying: error)
        }
        return names.sorted().compactMap { id in
            guard SafePathComponent(validating: id) != nil, !id.hasPrefix("."),
                let key = Catalog.readMarker(layout.pendingMarker(id)), Catalog.isKey(key)
            else {
                return nil
            }
            return (id, key)
        }
    }

    /// Drops the saved downloads of `keys` that point to no unfinished asset of their record: a change killed
    /// after linking its markers and before writing its buckets queued assets that were never added.
    /// Called with the lock held, by the recovery of that change.
    func dropStrayMarkers(ofKeys keys: Set<String>, digits: Int) throws {
        guard !keys.isEmpty else { return }
        var stray: [String] = []
        for marker in try pendingMarkers() where keys.contains(marker.key) {
            let asset = try record(key: marker.key, digits: digits)?.assets.first { $0.id == marker.id }
            if asset.map(\.isComplete) ?? true { stray.append(marker.id) }
        }
        try removeMarkers(stray)
    }

    /// Anchors whose issue has no marker left (a kill between the last marker's and the anchor's deletion).
    package func strayAnchors() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.pending)) ?? []
        return names.filter { $0.hasPrefix(Catalog.anchorPrefix) }.map { "\(layout.pending)/\($0)" }.filter {
            POSIX.linkStatus($0).map(POSIX.isSoleFile) ?? false
        }.sorted()
    }

    /// Puts assets in the saved list (asset id → issue key). The anchors made here are flushed (each, or
    /// with one `syncfs` when there are many), so that a marker linked to one reads its key after a power
    /// cut, as a symlink's target did.
    func addMarkers(_ added: [(id: String, key: String)]) throws {
        var made: [String] = []
        var anchors: Set<String> = []
        for (id, key) in added {
            let anchor = "\(layout.pending)/\(Catalog.anchorPrefix)\(key)"
            if anchors.insert(key).inserted, try Catalog.makeAnchor(anchor, key: key) { made.append(anchor) }
            try addMarker(layout.pendingMarker(id), key: key, anchor: anchor)
            CrashPoint.reached("pending-marker-linked")
        }
        guard durable, !made.isEmpty else { return }
        if made.count > 16 {
            try syncFileSystem()
        } else {
            for anchor in made { try POSIX.fsyncFile(anchor) }
        }
    }

    /// Creates the anchor holding `key`, or puts the key back into one that lost it (a kill between its
    /// creation and its write, before any marker was linked to it). Anything else in its place (a link,
    /// another kind of file, a file with other names) is replaced, never written through.
    /// - Returns: Whether it was written.
    private static func makeAnchor(_ anchor: String, key: String) throws -> Bool {
        if readMarker(anchor) == key, let info = POSIX.linkStatus(anchor), info.st_mode & S_IFMT == S_IFREG {
            return false
        }
        let fd: Int32
        if let (sole, _) = POSIX.openSoleFile(anchor, O_WRONLY) {
            fd = sole
        } else {
            try POSIX.unlinkIfPresent(anchor)
            fd = try POSIX.open(anchor, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
        }
        defer { _ = close(fd) }
        CrashPoint.reached("pending-anchor-created")
        try POSIX.call("cannot write", path: anchor) { ftruncate(fd, 0) }
        try Data(key.utf8).withUnsafeBytes { try POSIX.writeAll(fd, $0, path: anchor) }
        return true
    }

    /// Links the marker at `path` to `anchor`. A marker already there for the same key stays, but a symlink
    /// (version 2's form) is replaced by a link, atomically, so that the anchor counts it.
    private func addMarker(_ path: String, key: String, anchor: String) throws {
        while POSIX.retrying({ link(anchor, path) }) != 0 {
            switch errno {
            case EEXIST:
                var info = stat()
                let isLink = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
                if Catalog.readMarker(path) == key {
                    guard isLink else { return }
                    let temporary = LibraryLayout.temporary(beside: path)
                    try POSIX.unlinkIfPresent(temporary)
                    guard link(anchor, temporary) == 0 else { return }  // the symlink serves as it is
                    try POSIX.rename(temporary, path)
                    return
                }
                try POSIX.unlinkIfPresent(path)
            default:
                // No hard links here (EPERM on some file systems) or too many (EMLINK): a symlink.
                return try setLink(path, to: key)
            }
        }
    }

    /// Takes assets out of the saved list, and the anchors of issues left with no marker.
    func removeMarkers(_ ids: [String]) throws {
        guard !ids.isEmpty else { return }
        var keys = Set<String>()
        for id in ids {
            let path = layout.pendingMarker(id)
            if let key = Catalog.readMarker(path), Catalog.isKey(key) { keys.insert(key) }
            try POSIX.unlinkIfPresent(path)
        }
        CrashPoint.reached("pending-markers-removed")
        for key in keys.sorted() {
            let anchor = "\(layout.pending)/\(Catalog.anchorPrefix)\(key)"
            if let info = POSIX.linkStatus(anchor), POSIX.isSoleFile(info) { try POSIX.unlinkIfPresent(anchor) }
        }
    }

    /// The key a marker gives: a symlink's target, or the content of a plain file (a link to an anchor).
    /// Nil when there is none or it is not a key's length.
    static func readMarker(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return -1 }
            return readlink(path, base, raw.count)
        }
        if n > 0 { return String(decoding: buffer[0..<n], as: UTF8.self) }
        guard n < 0, errno == EINVAL else { return nil }  // EINVAL: not a symlink
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)  // a FIFO in its place never blocks
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count > 0 && count < 64 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// The target of a symlink of the catalog (an issue key), or nil.
    static func readLink(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return -1 }
            return readlink(path, base, raw.count)
        }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }

    /// Points the symlink at `path` to `key`. A symlink's target is written with its name in one
    /// step, so a marker is never half there.
    private func setLink(_ path: String, to key: String) throws {
        while symlink(key, path) != 0 {
            let code = errno
            guard code == EEXIST else { throw NewsstandError.posix(code, "cannot create", path: path) }
            if Catalog.readLink(path) == key { return }
            try POSIX.unlinkIfPresent(path)
        }
    }
}
