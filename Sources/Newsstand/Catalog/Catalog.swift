// `struct stat` reaches Swift through libarchive's headers, so its members need this import too.
internal import CLibArchive
import Crypto
import Foundation
internal import CSystemShims

#if canImport(Glibc)
    import Glibc
#endif

/// The catalog on disk: one JSON record per issue (the source of truth), an index journal derived
/// from the records (what `list` reads), and the saved list of pending downloads.
///
/// Reads need no lock: every record and index rewrite is a `rename`, every index append a whole line.
/// Writes go through ``write(_:)``, which holds the library's file lock, so several processes never
/// lose each other's changes. A change touches only the records it changes, so its cost does not grow
/// with the library. Blocking: call off the concurrency pool.
///
/// Crash safety: a change first names the keys it touches in `.catalog/intent`, then writes the
/// records (atomically: temporary file, fsync, rename, fsync of the folder), then appends their index
/// lines, then deletes the intent. The next writer (or reader) that finds an intent left by a killed
/// process re-derives those keys' index lines from their records, so the index never stays behind
/// the records.
final class Catalog: Sendable {
    /// The version written into `library.json`.
    static let version: Int64 = 2

    let layout: LibraryLayout
    /// Whether each change is flushed to stable storage before it counts as done.
    let durable: Bool
    /// How far the index may grow past twice its live size before it is compacted.
    let compactionSlack: Int

    init(layout: LibraryLayout, durable: Bool = true, compactionSlack: Int = 8 << 20) {
        self.layout = layout
        self.durable = durable
        self.compactionSlack = compactionSlack
    }

    /// The record key of an issue name: the first 128 bits of SHA-256 of its NFC form, in hex. Swift
    /// compares names by canonical equivalence, so both spellings of "é" must find the same record.
    static func key(for name: String) -> String {
        let digest = SHA256.hash(data: Array(name.precomposedStringWithCanonicalMapping.utf8))
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in digest.prefix(16) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func isKey(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    // MARK: - Opening

    /// Makes the catalog usable: creates a new one (when `create`), upgrades a version-1 `library.json`,
    /// and refuses one from a newer version or one that cannot be read, leaving it untouched.
    /// - Throws: `.libraryUnavailable` when there is no library and `create` is false;
    ///   `.manifestUnreadable`, `.manifestFromNewerVersion`.
    func prepare(create: Bool) throws {
        switch try readMarker() {
        case .current:
            // A backup left by an upgrade that committed but was killed before deleting it.
            if POSIX.exists(layout.manifestBackup) {
                try withLock { try POSIX.unlinkIfPresent(layout.manifestBackup) }
            }
        case .missing:
            guard create else {
                throw NewsstandError(.libraryUnavailable, "there is no library at \(layout.root)")
            }
            try withLock {
                guard case .missing = try readMarker() else { return }
                try makeEmptyCatalog(at: layout.catalog)
                if !POSIX.exists(layout.index) { try rebuildIndex() }
                try writeMarker()
            }
        case .version1:
            try withLock {
                guard case .version1(let data) = try readMarker() else { return }
                try CatalogUpgrade(catalog: self).run(version1: data)
            }
        }
    }

    enum Marker {
        case missing
        case current
        case version1(Data)
    }

    /// Reads `library.json`'s version.
    func readMarker() throws -> Marker {
        let path = layout.manifest
        guard let data = try AtomicFile.read(path) else { return .missing }
        let version: Int64? = try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do {
                var reader = JSONReader(bytes: bytes)
                try reader.expect(UInt8(ascii: "{"))
                var found: Int64?
                var first = true
                while let key = try reader.nextKey(first: first) {
                    first = false
                    if key == "version", case .integer(let value) = try reader.readValue() {
                        found = value
                    } else {
                        try reader.skipValue()
                    }
                }
                return found
            } catch {
                throw NewsstandError(
                    .manifestUnreadable, "\(path) is not a valid library manifest (\(error)); it was left untouched",
                    underlying: error)
            }
        }
        guard let version, version >= 1 else {
            throw NewsstandError(
                .manifestUnreadable, "\(path) has no valid \"version\"; it was left untouched")
        }
        if version > Self.version {
            throw NewsstandError(
                .manifestFromNewerVersion,
                "\(path) has version \(version), newer than this issues understands (\(Self.version)); it was left untouched"
            )
        }
        return version == 1 ? .version1(data) : .current
    }

    /// Writes the version-2 `library.json` (atomically): the commit point of a new or upgraded catalog.
    func writeMarker() throws {
        let text = """
            {"catalog":".catalog","format":"one JSON record per issue in .catalog/issues, a JSON-lines index in .catalog/index.jsonl","version":\(Self.version)}

            """
        try AtomicFile.write(Data(text.utf8), to: layout.manifest, durable: durable)
    }

    func makeEmptyCatalog(at base: String) throws {
        try POSIX.makeDirectory(base)
        try POSIX.makeDirectory(base + "/issues")
        try POSIX.makeDirectory(base + "/pending")
        try POSIX.makeDirectory(base + "/folders")
    }

    /// Whether a live issue other than the one with `key` owns `folderName` (compared case-folded). A
    /// claim whose issue is gone, or now has another folder, is stale (a crash between its steps).
    func isFolderClaimed(_ folderName: String, except key: String? = nil) throws -> Bool {
        guard let owner = Catalog.readLink(layout.folderClaim(folderName)), owner != key, Catalog.isKey(owner),
            let issue = try record(key: owner)
        else { return false }
        return issue.folderName.lowercased() == folderName.lowercased()
    }

    // MARK: - Reading

    /// The issue with exactly this name, or nil.
    /// - Throws: `.manifestUnreadable` naming a damaged record.
    func issue(named name: String) throws -> Issue? {
        guard let issue = try record(key: Catalog.key(for: name)) else { return nil }
        return issue.name == name ? issue : nil
    }

    /// The record stored under `key`, or nil.
    func record(key: String) throws -> Issue? {
        let path = layout.record(key)
        guard let data = try AtomicFile.read(path) else { return nil }
        return try data.withUnsafeBytes { raw in try IssueRecord.decode(raw.bindMemory(to: UInt8.self), path: path) }
    }

    /// Opens the index for reading, first repairing what a killed writer left (which takes the lock).
    func openIndex() throws -> CatalogIndexReader {
        if POSIX.exists(layout.intent) || !POSIX.exists(layout.index) {
            try withLock { try recover() }
        }
        guard let reader = try CatalogIndexReader(path: layout.index) else {
            throw NewsstandError(.manifestUnreadable, "\(layout.index) is missing")
        }
        return reader
    }

    /// The saved list of pending downloads: asset identifier → issue key.
    func pendingMarkers() throws -> [(id: String, key: String)] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: layout.pending)
        } catch CocoaError.fileReadNoSuchFile {
            return []
        } catch {
            throw NewsstandError(.io, "cannot read \(layout.pending): \(error.localizedDescription)", underlying: error)
        }
        return names.sorted().compactMap { id in
            guard SafePathComponent(validating: id) != nil, let key = readMarker(id), Catalog.isKey(key) else {
                return nil
            }
            return (id, key)
        }
    }

    private func readMarker(_ id: String) -> String? {
        Catalog.readLink(layout.pendingMarker(id))
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

    // MARK: - Writing

    /// Runs `body` holding the library's file lock.
    func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: layout.lockFile)
        defer { withExtendedLifetime(lock) {} }
        return try body()
    }

    /// Applies the changes `body` stages, under the lock, and makes them durable. If `body` throws,
    /// nothing is written.
    func write<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        try withLock { try writeHoldingLock(body) }
    }

    /// ``write(_:)`` for a caller that already holds the lock (``withLock(_:)``).
    func writeHoldingLock<T>(_ body: (inout CatalogChanges) throws -> T) throws -> T {
        try recover()
        var changes = CatalogChanges(catalog: self)
        let result = try body(&changes)
        try commit(changes)
        return result
    }

    private func commit(_ changes: CatalogChanges) throws {
        let keys = changes.changedKeys
        guard !keys.isEmpty || !changes.pendingAdded.isEmpty || !changes.pendingRemoved.isEmpty else { return }
        try AtomicFile.write(Data(keys.joined(separator: "\n").utf8), to: layout.intent, durable: false)
        CrashPoint.reached("catalog-intent")
        // Markers go in before the records that say "downloading" and out after the records that say
        // otherwise, so the saved list is never missing an asset in flight.
        try POSIX.makeDirectory(layout.pending)
        for (id, key) in changes.pendingAdded.sorted(by: { $0.key < $1.key }) {
            try setLink(layout.pendingMarker(id), to: key)
        }
        if !changes.foldersClaimed.isEmpty { try POSIX.makeDirectory(layout.folderClaims) }
        for folder in changes.foldersClaimed {
            if let owner = keys.first(where: { (changes.staged[$0] ?? nil)?.folderName == folder }) {
                try setLink(layout.folderClaim(folder), to: owner)
            }
        }
        // Many records: written without a flush each, then one syncfs for all of them.
        let bulk = keys.count > 16
        var shards = Set<String>()
        for key in keys {
            if case .some(let issue)? = changes.staged[key] {
                try POSIX.makeDirectory(layout.recordShard(key))
                try AtomicFile.write(
                    Data(IssueRecord.encode(issue)), to: layout.record(key), durable: durable && !bulk)
            } else {
                try POSIX.unlinkIfPresent(layout.record(key))
                shards.insert(layout.recordShard(key))
            }
            CrashPoint.reached("catalog-record")
        }
        for id in changes.pendingRemoved.sorted() { try POSIX.unlinkIfPresent(layout.pendingMarker(id)) }
        for folder in changes.foldersReleased { try POSIX.unlinkIfPresent(layout.folderClaim(folder)) }
        if durable {
            if bulk { try syncFileSystem() }
            for shard in shards.sorted() { try POSIX.fsyncDirectory(shard) }
            if !changes.pendingAdded.isEmpty || !changes.pendingRemoved.isEmpty {
                try POSIX.fsyncDirectory(layout.pending)
            }
        }
        CrashPoint.reached("catalog-records-written")
        var lines = JSONWriter(capacity: keys.count * 512)
        for key in keys {
            if case .some(let issue)? = changes.staged[key] {
                CatalogIndex.line(key: key, issue: issue, into: &lines)
            } else {
                CatalogIndex.removal(key: key, into: &lines)
            }
        }
        try appendToIndex(lines.bytes)
        CrashPoint.reached("catalog-index-appended")
        try POSIX.unlinkIfPresent(layout.intent)
    }

    /// Points the symlink at `path` to `key`. A symlink's target is written with its name in one
    /// step, so a marker or claim is never half there.
    private func setLink(_ path: String, to key: String) throws {
        while symlink(key, path) != 0 {
            let code = errno
            guard code == EEXIST else { throw NewsstandError.posix(code, "cannot create", path: path) }
            if Catalog.readLink(path) == key { return }
            try POSIX.unlinkIfPresent(path)
        }
    }

    func syncFileSystem() throws {
        let fd = try POSIX.open(layout.root, O_RDONLY | O_DIRECTORY)
        defer { _ = close(fd) }
        try POSIX.call("cannot flush", path: layout.root) { newsstand_syncfs(fd) }
    }

    /// Finishes what a killed writer left: re-derives the index lines of the keys in its intent, then
    /// rebuilds a missing index.
    /// Called with the lock held.
    func recover() throws {
        if let data = try AtomicFile.read(layout.intent) {
            let keys = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            var lines = JSONWriter()
            for key in keys where Catalog.isKey(key) {
                if let issue = try record(key: key) {
                    CatalogIndex.line(key: key, issue: issue, into: &lines)
                } else {
                    CatalogIndex.removal(key: key, into: &lines)
                }
            }
            try appendToIndex(lines.bytes)
            try POSIX.unlinkIfPresent(layout.intent)
        } else if !POSIX.exists(layout.index) {
            try rebuildIndex()
        }
    }

    /// Appends whole lines to the index and flushes them. A missing index, or one whose last line a
    /// power cut tore, is rebuilt from the records instead (which then include this change). When the
    /// journal has grown past twice its live size, it is compacted.
    private func appendToIndex(_ bytes: [UInt8]) throws {
        let path = layout.index
        guard let fd = try POSIX.openIfExists(path, O_RDWR | O_APPEND) else {
            try rebuildIndex()
            return
        }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        if info.st_size > 0 {
            var last: UInt8 = 0
            let n = withUnsafeMutableBytes(of: &last) { pread(fd, $0.baseAddress, 1, off_t(info.st_size - 1)) }
            if n != 1 || last != 0x0A {
                try rebuildIndex()
                return
            }
        }
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: path) }
        if durable { try POSIX.call("cannot flush", path: path) { fdatasync(fd) } }
        if let reader = try CatalogIndexReader(path: path) {
            let sizes = try reader.sizes()
            if sizes.file > 2 * sizes.live + compactionSlack { try compactIndex(reader) }
        }
    }

    /// Rewrites the index with only the latest line of each live issue.
    private func compactIndex(_ reader: CatalogIndexReader) throws {
        let entries = try reader.liveEntries()
        try writeIndex(to: layout.index) { emit in
            var buffer: [UInt8] = []
            for entry in entries {
                try reader.lineBytes(entry, into: &buffer)
                try emit(buffer)
            }
        }
    }

    /// Rebuilds the index from every record: what `verify --repair` does, and what a missing or torn
    /// index gets automatically.
    func rebuildIndex() throws {
        try writeIndex(to: layout.index) { emit in
            var lines = JSONWriter(capacity: 1 << 20)
            try forEachRecord { key, issue in
                CatalogIndex.line(key: key, issue: issue, into: &lines)
                if lines.bytes.count > 1 << 20 {
                    try emit(lines.bytes)
                    lines.removeAll()
                }
            }
            try emit(lines.bytes)
        }
    }

    /// Calls `body` with every record in key order. A damaged record stops the walk with its error.
    func forEachRecord(in base: String? = nil, _ body: (String, Issue) throws -> Void) throws {
        let records = base.map { $0 + "/issues" } ?? layout.records
        let shards = (try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []
        for shard in shards.sorted() where shard.utf8.count == 2 {
            let folder = "\(records)/\(shard)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
                let key = String(name.dropLast(5))
                guard Catalog.isKey(key), let data = try AtomicFile.read("\(folder)/\(name)") else { continue }
                let issue = try data.withUnsafeBytes { raw in
                    try IssueRecord.decode(raw.bindMemory(to: UInt8.self), path: "\(folder)/\(name)")
                }
                try body(key, issue)
            }
        }
    }

    /// Writes a whole index file through `fill` and moves it into place atomically. The header's
    /// `liveBytes` is written last, into room left for it.
    func writeIndex(to path: String, _ fill: (_ emit: ([UInt8]) throws -> Void) throws -> Void) throws {
        let temporary = "\(path).tmp-\(getpid())"
        let fd = try POSIX.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        var closed = false
        defer {
            if !closed {
                _ = close(fd)
                _ = unlink(temporary)
            }
        }
        let placeholder = [UInt8](repeating: 0x20, count: 47) + [0x0A]
        try placeholder.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: temporary) }
        var live = 0
        try fill { bytes in
            live += bytes.count
            try bytes.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: temporary) }
        }
        var header = CatalogIndex.header(liveBytes: live)
        header.removeLast()
        header += [UInt8](repeating: 0x20, count: max(0, placeholder.count - 1 - header.count)) + [0x0A]
        _ = header.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        if durable { try POSIX.fsync(fd, path: temporary) }
        closed = true
        _ = close(fd)
        try POSIX.rename(temporary, path)
        if durable { try POSIX.fsyncDirectory((path as NSString).deletingLastPathComponent) }
    }
}
