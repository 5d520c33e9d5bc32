import NewsstandCore
#if canImport(Glibc)
    import Glibc
#endif

/// The catalog's index, `.catalog/index.jsonl`: a journal with one line per change of an issue, the
/// newest line for a key winning. It is derived from the records and can always be rebuilt from them.
///
/// Each line puts what `list` needs first and the whole record last, so `list` reads a few fields and
/// jumps to the next newline, and `list --json` copies the record's bytes without re-encoding them:
/// ```
/// {"index":2,"liveBytes":123456,"id":"…"}                                the header, first line only
/// {"key":"…","name":"…","date":"…","status":"…","done":1,"total":2,"bytes":9,"folder":"…","issue":{…}}
/// (`"removing":true` and `"pinned":true` before `"issue"` when they hold; absent means false)
/// {"key":"…","removed":true}                                             the issue was removed
/// ```
/// A line is only ever appended whole, under the catalog lock; a reader ignores a last line without its
/// newline (an append in progress).
package enum CatalogIndex {
    static let version: Int64 = 2

    /// A record key (32 hex digits) held as two integers: no string to allocate per line of a
    /// 100,000-line index, and cheap to hash.
    package struct Key: Hashable {
        var high: UInt64
        var low: UInt64

        /// Parses 32 lowercase hex digits (read for every line of the index, so by hand).
        package init?(_ text: String) {
            var high: UInt64 = 0
            var low: UInt64 = 0
            var count = 0
            for byte in text.utf8 {
                let digit: UInt64
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(byte - UInt8(ascii: "a") + 10)
                default: return nil
                }
                if count < 16 { high = high << 4 | digit } else { low = low << 4 | digit }
                count += 1
                if count > 32 { return nil }
            }
            guard count == 32 else { return nil }
            self.high = high
            self.low = low
        }

        /// The key's first 64 bits: enough to tell keys apart in a scan, confirmed by the whole key.
        package var prefix: UInt64 { high }

        package var text: String {
            let a = String(high, radix: 16)
            let b = String(low, radix: 16)
            return String(repeating: "0", count: 16 - a.count) + a + String(repeating: "0", count: 16 - b.count) + b
        }
    }

    /// One issue's latest line.
    package struct Entry {
        package var key: Key
        package var summary: IssueSummary
        /// Where the `issue` object's bytes are in the index file.
        package var recordOffset: Int
        package var recordLength: Int32
        /// Where the whole line (with its newline) is.
        var lineOffset: Int
        var lineLength: Int32
    }

    /// The header line of a freshly written index holding `liveBytes` bytes of lines. `id` names this file (a
    /// new one per rewrite), so that the summary derived from it can tell whether it still is (``CatalogSummary``).
    static func header(liveBytes: Int, id: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("index", first: true)
        writer.integer(version)
        writer.key("liveBytes")
        writer.integer(Int64(liveBytes))
        writer.key("id")
        writer.string(id)
        writer.raw("}\n")
        return writer.bytes
    }

    /// A fresh file id: 16 random hex digits.
    static func newID() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The line recording `issue` as it now is.
    package static func line(key: String, issue: Issue, into writer: inout JSONWriter) {
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
        if summary.isPinned {
            writer.key("pinned")
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
    package enum Line {
        /// The first line; `id` is nil in an index written before ids (which no summary can match).
        case header(liveBytes: Int, id: String?)
        case issue(Entry)
        case removed(key: Key)
    }

    /// Parses one line (without its newline) that starts at `offset` in the file.
    package static func parse(_ line: UnsafeBufferPointer<UInt8>, offset: Int) throws -> Line {
        var reader = JSONReader(bytes: line)
        try reader.expect(UInt8(ascii: "{"))
        var key: Key?
        var name: String?
        var date: IssueDate?
        var status: Issue.Status?
        var done = 0
        var total = 0
        var bytes: Int64 = 0
        var folder: String?
        var removing = false
        var pinned = false
        var liveBytes: Int?
        var id: String?
        var first = true
        while let field = try reader.nextKey(first: first) {
            first = false
            switch field {
            case "key":
                guard let parsed = Key(try reader.readString()) else { throw reader.error("a bad key") }
                key = parsed
            case "name": name = try reader.readString()
            case "date": date = IssueDate(try reader.readString())
            case "status": status = Issue.Status(rawValue: try reader.readString())
            case "done": done = Int(try reader.readCount())
            case "total": total = Int(try reader.readCount())
            case "bytes": bytes = try reader.readCount()
            case "folder":
                // Usually the name itself: share its storage instead of holding a second copy.
                let text = try reader.readString()
                folder = text == name ? name : text
            case "removing": removing = try reader.readValue() == .bool(true)
            case "pinned": pinned = try reader.readValue() == .bool(true)
            case "removed":
                guard let key, try reader.readValue() == .bool(true) else { throw reader.error("bad removal line") }
                return .removed(key: key)
            case "index": _ = try reader.readCount()
            case "liveBytes": liveBytes = Int(try reader.readCount())
            case "id": id = try reader.readString()
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
                    folderName: folder, isBeingRemoved: removing, isPinned: pinned)
                return .issue(
                    Entry(
                        key: key, summary: summary, recordOffset: offset + start,
                        recordLength: Int32(clamping: line.count - 1 - start), lineOffset: offset,
                        lineLength: Int32(clamping: line.count + 1)))
            default: try reader.skipValue()
            }
        }
        if let liveBytes { return .header(liveBytes: liveBytes, id: id) }
        throw reader.error("a line with neither an issue nor a removal")
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
