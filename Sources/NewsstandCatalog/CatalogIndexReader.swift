internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the index file from an open descriptor in chunks, so that memory follows the number of
/// live issues, not the size of the journal. Blocking. Sendable: its state is a descriptor read only with
/// `pread`, so threads may share it (`verify` compares records on both cores).
package final class CatalogIndexReader: Sendable {
    package let path: String
    private let fd: Int32

    /// Opens the index, or returns nil when there is none.
    init?(path: String) throws {
        guard let fd = try POSIX.openIfExists(path, O_RDONLY) else { return nil }
        self.path = path
        self.fd = fd
    }

    deinit { _ = close(fd) }

    /// The index's size, and its header's `liveBytes` (0 when it has none) and id (nil when it has none).
    /// `rewritten` is where the lines that its last rewrite wrote end (one line per issue, keys not repeated).
    package func head() throws -> (file: Int, live: Int, id: String?, rewritten: Int) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        var head = [UInt8](repeating: 0, count: 128)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 128, 0) }
        if n > 0, let newline = head[0..<n].firstIndex(of: 0x0A) {
            let line = head[0..<newline]
            if case .header(let bytes, let id)? = try? line.withUnsafeBufferPointer({
                try CatalogIndex.parse($0, offset: 0)
            }) {
                return (Int(info.st_size), bytes, id, newline + 1 + bytes)
            }
        }
        return (Int(info.st_size), 0, nil, 0)
    }

    /// Where the last complete line at or before byte `size` ends (0 when there is none): a view that read the
    /// index as it was at `size` holds every line before this point, and perhaps some after (a line appended
    /// while it read), which read again change nothing.
    package func lineEnd(atOrBefore size: Int) throws -> Int {
        var end = size
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while end > 0 {
            let start = max(0, end - chunk.count)
            let count = end - start
            let done = chunk.withUnsafeMutableBytes {
                POSIX.readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), at: Int64(start))
            }
            guard done == count else { throw NewsstandError.posix(errno, "cannot read", path: path) }
            if let newline = chunk[..<count].lastIndex(of: 0x0A) { return start + newline + 1 }
            end = start
        }
        return 0
    }

    /// The lines appended after `start` (where a view of this index stopped reading: a line's start), parsed,
    /// with the end of the last whole one and the index's id; nil when there are more than `limit` (then
    /// reading the index again is as cheap as applying them one by one).
    package func appended(after start: Int, limit: Int) throws -> (id: String?, lines: [CatalogIndex.Line], end: Int)? {
        let head = try head()
        guard head.file >= start else { return nil }
        struct TooMany: Error {}
        var lines: [CatalogIndex.Line] = []
        var end = start
        do {
            try forEachRawLine(from: start, to: head.file) { line, offset in
                guard lines.count < limit else { throw TooMany() }
                lines.append(try CatalogIndex.parse(line, offset: offset))
                end = offset + line.count + 1
            }
        } catch is TooMany {
            return nil
        }
        return (head.id, lines, end)
    }

    /// The raw lines from `start` (a line's start) up to `end`, as ``LineFile/forEachLine(_:path:from:to:_:)``.
    func forEachRawLine(from start: Int, to end: Int, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void) throws {
        try LineFile.forEachLine(fd, path: path, from: start, to: end, body)
    }

    /// Calls `body` for every complete line in file order. A last line without a newline is skipped: an
    /// append still under way (or one a power cut tore, which the next writer repairs).
    /// - Returns: Whether the file ended in such a torn line.
    @discardableResult
    func forEachLine(_ body: (CatalogIndex.Line) throws -> Void) throws -> Bool {
        try LineFile.forEachLine(fd, path: path) { line, offset in
            do {
                try body(try CatalogIndex.parse(line, offset: offset))
            } catch let error as JSONSyntaxError {
                throw NewsstandError(
                    .manifestUnreadable,
                    "\(path) is damaged at byte \(offset + error.offset) (\(error.reason)); run `issues verify --repair` to rebuild it from the issue records",
                    underlying: error)
            }
        }
    }

    /// The latest line of every issue still listed, in no particular order.
    package func liveEntries() throws -> [CatalogIndex.Entry] {
        var entries: [CatalogIndex.Entry] = []
        var position: [CatalogIndex.Key: Int] = [:]
        // About 800 bytes a line for an issue with two assets: sized once instead of grown and rehashed.
        let estimate = try head().file / 800
        entries.reserveCapacity(estimate)
        position.reserveCapacity(estimate)
        var removed = 0
        try forEachLine { line in
            switch line {
            case .header: break
            case .issue(let entry):
                if let at = position[entry.key] {
                    entries[at] = entry
                } else {
                    position[entry.key] = entries.count
                    entries.append(entry)
                }
            case .removed(let key):
                if let at = position.removeValue(forKey: key) {
                    // Marked by a negative length and dropped below: cheaper than shifting the array.
                    entries[at].lineLength = -1
                    removed += 1
                }
            }
        }
        return removed == 0 ? entries : entries.filter { $0.lineLength >= 0 }
    }

    /// The live entries with `status` (all when nil), newest date first, then by name.
    package func sortedEntries(status: Issue.Status? = nil) throws -> [CatalogIndex.Entry] {
        try sorted(status: status) { $0 }
    }

    /// `transform` of each live entry with `status` (all when nil), newest date first, then by name.
    /// Sorts positions by a precomputed day number, so that 100,000 entries are never moved whole, and
    /// maps straight from them (no sorted copy of the entries is held beside the result).
    package func sorted<T>(status: Issue.Status? = nil, _ transform: (CatalogIndex.Entry) -> T) throws -> [T] {
        let entries = try liveEntries()
        var order = entries.indices.filter { status == nil || entries[$0].summary.status == status }
        let days = entries.map {
            Int32($0.summary.date.year * 10_000 + $0.summary.date.month * 100 + $0.summary.date.day)
        }
        order.sort { a, b in
            days[a] != days[b] ? days[a] > days[b] : entries[a].summary.name < entries[b].summary.name
        }
        return order.map { transform(entries[$0]) }
    }

    /// Calls `body` with each of `entries` and its record's bytes, reading the file once in order instead of
    /// once per entry (100,000 `pread`s were a tenth of a `prune` plan). `entries` must be live entries of this
    /// file (``liveEntries()``); they are visited in file order.
    package func forEachRecord(
        of entries: [CatalogIndex.Entry], _ body: (CatalogIndex.Entry, UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        let order = entries.indices.sorted { entries[$0].lineOffset < entries[$1].lineOffset }
        guard let first = order.first else { return }
        var next = 0
        let end = entries[order[order.count - 1]].lineOffset + Int(entries[order[order.count - 1]].lineLength)
        try LineFile.forEachLine(fd, path: path, from: entries[first].lineOffset, to: end) { line, offset in
            while next < order.count, entries[order[next]].lineOffset < offset { next += 1 }
            guard next < order.count, entries[order[next]].lineOffset == offset else { return }
            let entry = entries[order[next]]
            let start = entry.recordOffset - offset
            guard start >= 0, start + Int(entry.recordLength) <= line.count else {
                throw NewsstandError(.manifestUnreadable, "\(path) changed while it was read; run the command again")
            }
            try body(entry, UnsafeBufferPointer(rebasing: line[start..<(start + Int(entry.recordLength))]))
            next += 1
        }
        guard next == order.count else {
            throw NewsstandError(.manifestUnreadable, "\(path) ended inside a record; run `issues verify --repair`")
        }
    }

    /// The bytes of one entry's record.
    package func recordBytes(_ entry: CatalogIndex.Entry, into buffer: inout [UInt8]) throws {
        try recordBytes(offset: entry.recordOffset, length: entry.recordLength, into: &buffer)
    }

    /// The bytes of the record at `offset`, for a caller that keeps only where its entries' records are.
    package func recordBytes(offset: Int, length: Int32, into buffer: inout [UInt8]) throws {
        try read(offset: offset, length: Int(length), into: &buffer)
    }

    /// The bytes of one entry's whole line, newline included.
    func lineBytes(_ entry: CatalogIndex.Entry, into buffer: inout [UInt8]) throws {
        try read(offset: entry.lineOffset, length: Int(entry.lineLength), into: &buffer)
    }

    private func read(offset: Int, length: Int, into buffer: inout [UInt8]) throws {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: length))
        let done = buffer.withUnsafeMutableBytes { POSIX.readFully(fd, into: $0, at: Int64(offset)) }
        if done < 0 { throw NewsstandError.posix(errno, "cannot read", path: path) }
        guard done == length else {
            throw NewsstandError(.manifestUnreadable, "\(path) ended inside a record; run `issues verify --repair`")
        }
    }
}
