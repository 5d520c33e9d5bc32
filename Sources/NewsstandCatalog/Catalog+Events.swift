// `struct stat` reaches Swift through the shim module.
internal import CSystemShims
import Crypto
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The event log: written in the same change as what it reports.
///
/// A change's events go into its intent (each with the condition that says whether the change landed: the
/// record as staged, or the file's new digest), then the records are written, then the events are appended
/// to `.catalog/events.jsonl` and flushed. A process killed before the append leaves the intent; whoever
/// finishes it appends exactly the events whose change is in the records and whose cursor the log does not
/// hold yet. So an event is never announced for a change a crash lost, and no committed change lacks one.
extension Catalog {
    /// One event of a change with the condition under which the change landed.
    struct PendingEvent {
        /// `record KEY DIGEST|gone` or `file RELATIVE-PATH DIGEST|gone`.
        var condition: String
        var event: CatalogEvent
    }

    /// What the records staged in `changes` report: an issue added, made available, failed or removed.
    /// Derived from the records themselves, so no caller can make a change and forget its event.
    func derivedEvents(_ changes: CatalogChanges, keys: [String]) -> [PendingEvent] {
        var events: [PendingEvent] = []
        let now = Date()
        for key in keys {
            let before = changes.originalIssue(key)
            let after = changes.staged[key] ?? nil
            var kinds: [CatalogEvent.Kind] = []
            switch (before, after) {
            case (nil, .some(let issue)):
                kinds.append(.issueAdded)
                if issue.status == .available { kinds.append(.issueAvailable) }
            case (.some, nil):
                kinds.append(.issueRemoved)
            case (.some(let old), .some(let new)):
                if new.status == .available && old.status != .available { kinds.append(.issueAvailable) }
                if new.status == .failed && old.status != .failed { kinds.append(.issueFailed) }
            case (nil, nil):
                break
            }
            for kind in kinds {
                if kind == .issueRemoved {
                    events.append(
                        PendingEvent(
                            condition: "record \(key) gone",
                            event: CatalogEvent(kind: kind, issue: before, reason: changes.removalReason, time: now)))
                } else if let after {
                    events.append(
                        PendingEvent(
                            condition: "record \(key) \(Catalog.digest(IssueRecord.encode(after)))",
                            event: CatalogEvent(kind: kind, issue: after, time: now)))
                }
            }
        }
        return events
    }

    static func digest(_ bytes: some DataProtocol) -> String {
        FileDigest.hex(SHA256.hash(data: bytes))
    }

    /// Numbers the events after the log's last cursor.
    func number(_ events: inout [PendingEvent]) throws {
        guard !events.isEmpty else { return }
        var cursor = try lastEventCursor()
        for index in events.indices {
            cursor += 1
            events[index].event.cursor = cursor
        }
    }

    /// Appends `events` (already numbered) to the log, flushed when the catalog is durable. Called holding the lock.
    func appendEvents(_ events: [CatalogEvent]) throws {
        guard !events.isEmpty else { return }
        var bytes: [UInt8] = []
        for event in events { bytes += event.encoded() }
        try POSIX.makeDirectory(layout.catalog)
        let path = layout.events
        let fd = try POSIX.open(path, O_RDWR | O_APPEND | O_CREAT)
        defer { _ = close(fd) }
        var size = try trimTornLine(fd, path: path)
        try bytes.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: path) }
        if durable { try POSIX.call("cannot flush", path: path) { fdatasync(fd) } }
        size += Int64(bytes.count)
        if size > Int64(eventLogBytes) { try compactEvents() }
    }

    /// Cuts a last line a power cut tore (no newline at the end), so the next append starts a line.
    /// - Returns: The file's size after.
    private func trimTornLine(_ fd: Int32, path: String) throws -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        let size = Int64(info.st_size)
        guard size > 0 else { return 0 }
        let (lastStart, endsWithNewline) = try lastLineStart(fd, size: size, path: path)
        if endsWithNewline { return size }
        try POSIX.call("cannot repair", path: path) { ftruncate(fd, off_t(lastStart)) }
        return lastStart
    }

    /// Where the file's last line starts (for a file that ends with a newline, the last whole line), and
    /// whether the file ends with a newline. Reads backwards from the end in blocks.
    private func lastLineStart(_ fd: Int32, size: Int64, path: String) throws -> (Int64, Bool) {
        var end = size
        var block = [UInt8](repeating: 0, count: 4096)
        var endsWithNewline = false
        var first = true
        while end > 0 {
            let start = max(0, end - Int64(block.count))
            let count = Int(end - start)
            let n = block.withUnsafeMutableBytes {
                POSIX.readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]), at: start)
            }
            guard n == count else { throw NewsstandError.posix(errno, "cannot read", path: path) }
            var index = count - 1
            if first {
                endsWithNewline = block[index] == 0x0A
                if endsWithNewline { index -= 1 }
                first = false
            }
            while index >= 0 {
                if block[index] == 0x0A { return (start + Int64(index) + 1, endsWithNewline) }
                index -= 1
            }
            end = start
        }
        return (0, endsWithNewline)
    }

    /// The cursor of the log's last event, or 0 when the log is empty or missing.
    /// - Throws: `.manifestUnreadable` naming the log when its last whole line is not an event.
    package func lastEventCursor() throws -> Int64 {
        let path = layout.events
        guard let fd = try POSIX.openIfExists(path, O_RDONLY) else { return 0 }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        var size = Int64(info.st_size)
        var (start, endsWithNewline) = try lastLineStart(fd, size: size, path: path)
        if !endsWithNewline {
            // A torn last line is not an event: the one before it is the last.
            size = start
            guard size > 0 else { return 0 }
            (start, _) = try lastLineStart(fd, size: size, path: path)
        }
        var line = [UInt8](repeating: 0, count: Int(size - start - 1))
        if !line.isEmpty {
            let n = line.withUnsafeMutableBytes { POSIX.readFully(fd, into: $0, at: start) }
            guard n == line.count else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        }
        return try line.withUnsafeBufferPointer { try CatalogEvent.decode($0, path: path).cursor }
    }

    /// Finishes the events of an intent a killed writer left: appends, in order, each whose change is in
    /// the records (or files) and whose cursor the log does not hold yet. Called holding the lock.
    func recoverEvents(_ entries: [String], digits: Int) throws {
        let pending = entries.filter { $0.hasPrefix("event\t") }
        guard !pending.isEmpty else { return }
        let last = try lastEventCursor()
        var landed: [CatalogEvent] = []
        for entry in pending {
            let parts = entry.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let event = try Array(parts[2].utf8).withUnsafeBufferPointer {
                try CatalogEvent.decode($0, path: layout.intent)
            }
            guard event.cursor > last, try conditionHolds(String(parts[1]), digits: digits) else { continue }
            landed.append(event)
        }
        try appendEvents(landed)
    }

    private func conditionHolds(_ condition: String, digits: Int) throws -> Bool {
        let words = condition.split(separator: " ").map(String.init)
        guard words.count == 3 else { return false }
        switch words[0] {
        case "record":
            guard Catalog.isKey(words[1]) else { return false }
            let current = try record(key: words[1], digits: digits)
            guard let current else { return words[2] == "gone" }
            return Catalog.digest(IssueRecord.encode(current)) == words[2]
        case "file":
            // The relative path was percent-encoded so that spaces cannot split the condition.
            guard let relative = words[1].removingPercentEncoding, !relative.contains("..") else { return false }
            guard let data = try AtomicFile.read(layout.root + "/" + relative) else { return words[2] == "gone" }
            return Catalog.digest(data) == words[2]
        default:
            return false
        }
    }

    /// Replaces a file of the catalog (a subscription's record) atomically and durably, announcing `events`
    /// in the same crash-safe step: the events are appended if and only if the file holds `data`. Called
    /// holding the lock (``withLock(_:)``).
    package func replaceFile(_ path: String, with data: Data, announcing events: [CatalogEvent]) throws {
        try recover()
        guard !events.isEmpty, path.hasPrefix(layout.root + "/") else {
            try AtomicFile.write(data, to: path)
            return
        }
        let relative = String(path.dropFirst(layout.root.count + 1))
        let encoded = relative.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "/._-")))
        var pending = events.map {
            PendingEvent(condition: "file \(encoded ?? relative) \(Catalog.digest(data))", event: $0)
        }
        var intent = IntentText()
        try number(&pending)
        intent.events(pending)
        try writeIntent(intent)
        CrashPoint.reached("catalog-intent")
        try AtomicFile.write(data, to: path)
        CrashPoint.reached("catalog-records-written")
        try appendEvents(pending.map(\.event))
        CrashPoint.reached("catalog-events-appended")
        try clearIntent()
        onEvents?()
    }

    /// Appends events that report no change of the catalog (low free space): nothing to keep in step with.
    package func announce(_ events: [CatalogEvent]) throws {
        var pending = events.map { PendingEvent(condition: "", event: $0) }
        try withLock {
            try recover()
            try number(&pending)
            try appendEvents(pending.map(\.event))
        }
        onEvents?()
    }

    // MARK: - Reading

    /// Where a reader of the log stands: the file it read (its inode) and how far.
    package struct LogPosition: Sendable, Hashable {
        package var inode: UInt64 = 0
        package var offset: Int64 = 0
        package init() {}
    }

    /// The events after `cursor`, in order, read from `position` (when the log is still the same file; from
    /// its start when compaction replaced it); stops at the last whole line.
    /// - Returns: The events, and where to read from next time.
    /// - Throws: `.manifestUnreadable` naming the log when a line is not an event.
    package func readEvents(after cursor: Int64, from position: LogPosition = LogPosition()) throws
        -> (events: [CatalogEvent], next: LogPosition)
    {
        let path = layout.events
        guard let fd = try POSIX.openIfExists(path, O_RDONLY | O_NONBLOCK) else { return ([], LogPosition()) }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        var next = LogPosition()
        next.inode = UInt64(info.st_ino)
        let start = next.inode == position.inode && position.offset <= Int64(info.st_size) ? position.offset : 0
        next.offset = start
        let count = Int(Int64(info.st_size) - start)
        guard count > 0 else { return ([], next) }
        var data = [UInt8](repeating: 0, count: count)
        let n = data.withUnsafeMutableBytes { POSIX.readFully(fd, into: $0, at: start) }
        guard n >= 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        var events: [CatalogEvent] = []
        try data.withUnsafeBufferPointer { bytes in
            var lineStart = 0
            while lineStart < n, let newline = bytes[lineStart..<n].firstIndex(of: 0x0A) {
                let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<newline])
                lineStart = newline + 1
                next.offset = start + Int64(lineStart)
                guard !line.isEmpty, !Catalog.lineCursor(line, atMost: cursor) else { continue }
                events.append(try CatalogEvent.decode(line, path: path))
            }
        }
        return (events, next)
    }

    /// Whether a line's cursor (its first member, as written) is at most `cursor`: lets a reader skip old
    /// lines without parsing them.
    private static func lineCursor(_ line: UnsafeBufferPointer<UInt8>, atMost cursor: Int64) -> Bool {
        let prefix = Array("{\"cursor\":".utf8)
        guard line.count > prefix.count, line.starts(with: prefix) else { return false }
        var value: Int64 = 0
        for byte in line[prefix.count...] {
            guard byte >= 0x30, byte <= 0x39 else { break }
            value = value &* 10 &+ Int64(byte - 0x30)
        }
        return value <= cursor
    }
}
