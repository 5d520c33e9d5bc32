// `struct stat` reaches Swift through the shim module.
internal import CSystemShims
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The index's summary, `.catalog/summary.jsonl`: every index line without its record, so that `list` reads
/// what it shows and not the records beside it (at 1,000,000 issues, 0.9 GB of index for 0.2 GB of summary).
/// It is derived from the index as the index is from the records, appended with it under the catalog lock,
/// never flushed, and trusted only as far as it proves itself:
/// ```
/// {"summary":1,"index":"<the index's id>","end":80}           the header: the index it mirrors, where its lines start
/// {"key":"…","name":"…",…,"pinned":true,"at":1234,"end":5678} an index line's members before "issue", where
///                                                              the record starts and where the line ends
/// {"key":"…","removed":true,"end":5678}                       a removal line
/// ```
/// A reader uses it when its header names the id in the index's header, and then reads the index itself
/// from the last complete line's `end` (what a writer killed between the two appends left only in the
/// index). A missing summary, another id or a damaged line, and the reader reads the whole index instead.
package enum CatalogSummary {
    static let version: Int64 = 1

    /// The summary of the index at `index` (the same folder: an upgrade builds its index elsewhere).
    static func path(besideIndex index: String) -> String {
        guard let slash = index.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "summary.jsonl" }
        return String(index[...slash]) + "summary.jsonl"
    }

    /// The header of a summary of the index with `indexID` whose lines start at `start`.
    static func header(indexID: String, start: Int) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("summary", first: true)
        writer.integer(version)
        writer.key("index")
        writer.string(indexID)
        writer.key("end")
        writer.integer(Int64(start))
        writer.raw("}\n")
        return writer.bytes
    }

    /// Appends the summary lines of `lines`, whole index lines the first of which starts at file offset
    /// `offset`. The index's header line is skipped.
    package static func derive(_ lines: UnsafeBufferPointer<UInt8>, at offset: Int, into out: inout [UInt8]) {
        guard let base = lines.baseAddress else { return }
        var start = 0
        while start < lines.count, let found = memchr(base + start, 0x0A, lines.count - start) {
            let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            deriveLine(UnsafeBufferPointer(rebasing: lines[start..<newline]), at: offset + start, into: &out)
            start = newline + 1
        }
    }

    /// Appends the summary line of one index line (without its newline) that starts at file offset `offset`;
    /// nothing for the header, or for a line this index does not write (its reader refuses that).
    static func deriveLine(_ line: UnsafeBufferPointer<UInt8>, at offset: Int, into out: inout [UInt8]) {
        guard !line.starts(with: issuePrefix) else { return }
        // `,"issue":` cannot occur inside a string of the line (a quote in a string is escaped), so its first
        // occurrence is the member that starts the record.
        if let member = find(recordMember, in: line) {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: line[..<member]))
            appendMember("at", offset + member + recordMember.count, to: &out)
        } else if line.last == UInt8(ascii: "}") {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: line[..<(line.count - 1)]))
        } else {
            return
        }
        appendMember("end", offset + line.count + 1, to: &out)
        out.append(contentsOf: [UInt8(ascii: "}"), 0x0A])
    }

    private static let issuePrefix = Array(#"{"index""#.utf8)
    private static let recordMember = Array(#","issue":"#.utf8)

    private static func appendMember(_ name: StaticString, _ value: Int, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: "\"")])
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        out.append(contentsOf: String(value).utf8)
    }

    /// The first position of `needle` in `line`. (Glibc's `memmem` is a GNU extension Swift does not import; the
    /// member sought comes after the summary fields, about 150 bytes in.)
    private static func find(_ needle: [UInt8], in line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = needle.first, line.count >= needle.count else { return nil }
        var at = 0
        let last = line.count - needle.count
        while at <= last {
            if line[at] == first, needle.indices.allSatisfy({ line[at + $0] == needle[$0] }) { return at }
            at += 1
        }
        return nil
    }

    /// What a summary file says about itself: the index id of its header, the length up to its last newline,
    /// and the `end` of its last complete line (how far into the index it reaches). Nil when it has no
    /// readable header.
    static func state(of fd: Int32) -> (indexID: String, complete: Int, covered: Int)? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return nil }
        let size = Int(info.st_size)
        var head = [UInt8](repeating: 0, count: min(size, 256))
        guard head.withUnsafeMutableBytes({ POSIX.readFully(fd, into: $0, at: 0) }) == head.count,
            let newline = head.firstIndex(of: 0x0A),
            let object = try? head[..<newline].withUnsafeBufferPointer({ try JSONReader.parseObject($0, skipping: nil) }
            ),
            object["summary"] == .integer(version), case .string(let id)? = object["index"]
        else { return nil }
        // The last line's end is in the last few kilobytes (a line is about 250 bytes); a torn tail may hide it.
        for length in [4096, 1 << 16] {
            let tailLength = min(size, length)
            var tail = [UInt8](repeating: 0, count: tailLength)
            guard
                tail.withUnsafeMutableBytes({ POSIX.readFully(fd, into: $0, at: Int64(size - tailLength)) })
                    == tailLength
            else { return nil }
            guard let last = tail.lastIndex(of: 0x0A) else { continue }
            // The last complete line (only its last member is read: a line cut at the tail's start still ends so).
            let lineStart = (tail[..<last].lastIndex(of: 0x0A).map { $0 + 1 }) ?? 0
            let covered = tail.withUnsafeBufferPointer { end(of: UnsafeBufferPointer(rebasing: $0[lineStart..<last])) }
            guard let covered else { return nil }
            return (id, size - tailLength + last + 1, covered)
        }
        return nil
    }

    /// The value of a summary line's last member, `"end":N}`, or nil when it does not end so.
    package static func end(of line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard line.last == UInt8(ascii: "}"), let colon = line.lastIndex(of: UInt8(ascii: ":")),
            line[..<colon].reversed().starts(with: #""dne""#.utf8)
        else { return nil }
        var value = 0
        for byte in line[(colon + 1)..<(line.count - 1)] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value < Int.max / 20 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return colon + 1 < line.count - 1 ? value : nil
    }
}
