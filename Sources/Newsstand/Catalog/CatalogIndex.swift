// `struct stat` reaches Swift through libarchive's headers, so its members need this import too.
internal import CLibArchive
#if canImport(Glibc)
    import Glibc
#endif

/// The catalog's index, `.catalog/index.jsonl`: a journal with one line per change of an issue, the
/// newest line for a key winning. It is derived from the records and can always be rebuilt from them.
///
/// Each line puts what `list` needs first and the whole record last, so `list` reads a few fields and
/// jumps to the next newline, and `list --json` copies the record's bytes without re-encoding them:
/// ```
/// {"index":2,"liveBytes":123456}                                         the header, first line only
/// {"key":"…","name":"…","date":"…","status":"…","done":1,"total":2,"bytes":9,"folder":"…","issue":{…}}
/// {"key":"…","removed":true}                                             the issue was removed
/// ```
/// A line is only ever appended whole, under the catalog lock; a reader ignores a last line without its
/// newline (an append in progress).
enum CatalogIndex {
    static let version: Int64 = 2

    /// One issue's latest line.
    struct Entry {
        var key: String
        var summary: IssueSummary
        /// Where the `issue` object's bytes are in the index file.
        var recordOffset: Int
        var recordLength: Int
        /// Where the whole line (with its newline) is.
        var lineOffset: Int
        var lineLength: Int
    }

    /// The header line of a freshly written index holding `liveBytes` bytes of lines.
    static func header(liveBytes: Int) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("index", first: true)
        writer.integer(version)
        writer.key("liveBytes")
        writer.integer(Int64(liveBytes))
        writer.raw("}\n")
        return writer.bytes
    }

    /// The line recording `issue` as it now is.
    static func line(key: String, issue: Issue, into writer: inout JSONWriter) {
        let summary = IssueSummary(issue)
        writer.raw("{")
        writer.key("key", first: true)
        writer.string(key)
        writer.key("name")
        writer.string(summary.name)
        writer.key("date")
        writer.string(summary.date.description)
        writer.key("status")
        writer.string(summary.status.rawValue)
        writer.key("done")
        writer.integer(Int64(summary.assetsDone))
        writer.key("total")
        writer.integer(Int64(summary.assetsTotal))
        writer.key("bytes")
        writer.integer(summary.bytes)
        writer.key("folder")
        writer.string(summary.folderName)
        if summary.isBeingRemoved {
            writer.key("removing")
            writer.bool(true)
        }
        writer.key("issue")
        issue.write(to: &writer)
        writer.raw("}\n")
    }

    /// The line recording that the issue with `key` is gone.
    static func removal(key: String, into writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("key", first: true)
        writer.string(key)
        writer.key("removed")
        writer.bool(true)
        writer.raw("}\n")
    }

    /// What one line says.
    enum Line {
        case header(liveBytes: Int)
        case issue(Entry)
        case removed(key: String)
    }

    /// Parses one line (without its newline) that starts at `offset` in the file.
    static func parse(_ line: UnsafeBufferPointer<UInt8>, offset: Int) throws -> Line {
        var reader = JSONReader(bytes: line)
        try reader.expect(UInt8(ascii: "{"))
        var key: String?
        var name: String?
        var date: IssueDate?
        var status: Issue.Status?
        var done = 0
        var total = 0
        var bytes: Int64 = 0
        var folder: String?
        var removing = false
        var liveBytes: Int?
        var first = true
        while let field = try reader.nextKey(first: first) {
            first = false
            switch field {
            case "key": key = try reader.readString()
            case "name": name = try reader.readString()
            case "date": date = IssueDate(try reader.readString())
            case "status": status = Issue.Status(rawValue: try reader.readString())
            case "done": done = Int(try reader.readCount())
            case "total": total = Int(try reader.readCount())
            case "bytes": bytes = try reader.readCount()
            case "folder": folder = try reader.readString()
            case "removing": removing = try reader.readValue() == .bool(true)
            case "removed":
                guard let key, try reader.readValue() == .bool(true) else { throw reader.error("bad removal line") }
                return .removed(key: key)
            case "index": _ = try reader.readCount()
            case "liveBytes": liveBytes = Int(try reader.readCount())
            case "issue":
                // The record is the last member: its bytes run to the line's closing brace.
                let start = reader.i
                guard line.count - start >= 3, line[line.count - 1] == UInt8(ascii: "}"),
                    line[start] == UInt8(ascii: "{"), line[line.count - 2] == UInt8(ascii: "}")
                else { throw reader.error("the issue record is not the line's last member") }
                guard let key, let name, let date, let status, let folder else {
                    throw reader.error("a summary field is missing or invalid")
                }
                let summary = IssueSummary(
                    name: name, date: date, status: status, assetsDone: done, assetsTotal: total, bytes: bytes,
                    folderName: folder, isBeingRemoved: removing)
                return .issue(
                    Entry(
                        key: key, summary: summary, recordOffset: offset + start,
                        recordLength: line.count - 1 - start, lineOffset: offset, lineLength: line.count + 1))
            default: try reader.skipValue()
            }
        }
        if let liveBytes { return .header(liveBytes: liveBytes) }
        throw reader.error("a line with neither an issue nor a removal")
    }
}

/// Reads the index file from an open descriptor in chunks, so that memory follows the number of
/// live issues, not the size of the journal. Blocking.
final class CatalogIndexReader {
    let path: String
    private let fd: Int32

    /// Opens the index, or returns nil when there is none.
    init?(path: String) throws {
        guard let fd = try POSIX.openIfExists(path, O_RDONLY) else { return nil }
        self.path = path
        self.fd = fd
    }

    deinit { _ = close(fd) }

    /// The index's size and the `liveBytes` of its header (0 when it has none).
    func sizes() throws -> (file: Int, live: Int) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
        var head = [UInt8](repeating: 0, count: 128)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 128, 0) }
        var live = 0
        if n > 0, let newline = head[0..<n].firstIndex(of: 0x0A) {
            let line = head[0..<newline]
            if case .header(let bytes)? = try? line.withUnsafeBufferPointer({ try CatalogIndex.parse($0, offset: 0) }) {
                live = bytes
            }
        }
        return (Int(info.st_size), live)
    }

    /// Calls `body` for every complete line in file order. A last line without a newline is skipped: an
    /// append still under way (or one a power cut tore, which the next writer repairs).
    /// - Returns: Whether the file ended in such a torn line.
    @discardableResult
    func forEachLine(_ body: (CatalogIndex.Line) throws -> Void) throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1 << 22)
        var filled = 0
        var fileOffset = 0  // of buffer[0]
        while true {
            if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress.map { $0 + filled }, raw.count - filled, off_t(fileOffset + filled))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw NewsstandError.posix(errno, "cannot read", path: path)
            }
            if n == 0 { return filled > 0 }
            filled += n
            var start = 0
            try buffer.withUnsafeBufferPointer { all in
                while let newline = Self.newline(in: all, from: start, to: filled) {
                    let line = UnsafeBufferPointer(rebasing: all[start..<newline])
                    do {
                        try body(try CatalogIndex.parse(line, offset: fileOffset + start))
                    } catch let error as JSONSyntaxError {
                        throw NewsstandError(
                            .manifestUnreadable,
                            "\(path) is damaged at byte \(fileOffset + start + error.offset) (\(error.reason)); run `issues verify --repair` to rebuild it from the issue records",
                            underlying: error)
                    }
                    start = newline + 1
                }
            }
            buffer.withUnsafeMutableBytes { raw in
                if start > 0, let base = raw.baseAddress {
                    memmove(base, base + start, filled - start)
                }
            }
            filled -= start
            fileOffset += start
        }
    }

    /// The latest line of every issue still listed, in no particular order.
    func liveEntries() throws -> [CatalogIndex.Entry] {
        var entries: [CatalogIndex.Entry] = []
        var position: [String: Int] = [:]
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
                    // Marked by an empty key and dropped below: cheaper than shifting the array.
                    entries[at].key = ""
                    removed += 1
                }
            }
        }
        return removed == 0 ? entries : entries.filter { !$0.key.isEmpty }
    }

    /// The bytes of one entry's record.
    func recordBytes(_ entry: CatalogIndex.Entry, into buffer: inout [UInt8]) throws {
        try read(offset: entry.recordOffset, length: entry.recordLength, into: &buffer)
    }

    /// The bytes of one entry's whole line, newline included.
    func lineBytes(_ entry: CatalogIndex.Entry, into buffer: inout [UInt8]) throws {
        try read(offset: entry.lineOffset, length: entry.lineLength, into: &buffer)
    }

    private func read(offset: Int, length: Int, into buffer: inout [UInt8]) throws {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: length))
        var done = 0
        while done < length {
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress.map { $0 + done }, length - done, off_t(offset + done))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                throw NewsstandError(.manifestUnreadable, "\(path) ended inside a record; run `issues verify --repair`")
            }
            done += n
        }
    }

    private static func newline(in buffer: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let base = buffer.baseAddress,
            let found = memchr(base + from, 0x0A, to - from)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}

extension JSONReader {
    /// A string value (after whitespace), or throws.
    mutating func readString() throws -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
        return try string()
    }

    /// A non-negative integer value, or throws.
    mutating func readCount() throws -> Int64 {
        guard case .integer(let value) = try readValue(), value >= 0 else {
            throw error("expected a non-negative integer")
        }
        return value
    }
}
