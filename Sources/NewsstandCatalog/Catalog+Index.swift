// `struct stat` reaches Swift through the shim module.
internal import CSystemShims
import Foundation
import Logging
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Keeping the derived index: appending, compacting, rebuilding from the records.
extension Catalog {
    /// Appends whole lines to the index and flushes them. A missing index, one whose last line a power
    /// cut tore, or a symbolic link in its place (never written through: `O_NOFOLLOW`; the rebuild's rename
    /// replaces the link, not what it points to) is rebuilt from the records instead (which then include this
    /// change). When the journal has grown past twice its live size, it is compacted; the change is committed
    /// by then, so a compaction that fails (a damaged line) is logged as a warning, not thrown.
    func appendToIndex(_ bytes: [UInt8]) throws {
        let path = layout.index
        let opened: Int32?
        do {
            opened = try POSIX.openIfExists(path, O_RDWR | O_APPEND | O_NOFOLLOW)
        } catch let error as NewsstandError where error.errno == ELOOP {
            opened = nil
        }
        guard let fd = opened else {
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
        do {
            if let reader = try CatalogIndexReader(path: path) {
                let head = try reader.head()
                if head.file > 2 * head.live + compactionSlack || head.id == nil {
                    // An index from before ids gets one here (a rewrite writes the summary too).
                    try compactIndex(reader)
                } else if let id = head.id, !appendToSummary(bytes, at: Int(info.st_size), of: reader, indexID: id) {
                    // No summary of this index to extend (missing, or one a crash or another program left
                    // unmatched): written again from the index.
                    try rewriteSummary(of: reader, indexID: id, start: head.rewritten - head.live)
                }
            }
        } catch {
            logger?.warning(
                "the change was saved, but compacting the catalog index failed: \(error); `issues verify --repair` rebuilds it"
            )
        }
    }

    /// Appends to the summary the lines of `bytes`, just appended to the index at `offset`, after the lines a
    /// writer killed between the two appends left out (read back from the index). A torn last line is cut off.
    /// - Returns: False when there is no summary of the index with `indexID` to extend.
    private func appendToSummary(_ bytes: [UInt8], at offset: Int, of index: CatalogIndexReader, indexID: String)
        -> Bool
    {
        let path = CatalogSummary.path(besideIndex: index.path)
        guard let (fd, _) = POSIX.openSoleFile(path, O_RDWR) else { return false }
        defer { _ = close(fd) }
        guard let state = CatalogSummary.state(of: fd), state.indexID == indexID, state.covered <= offset else {
            return false
        }
        var lines: [UInt8] = []
        do {
            if state.covered < offset {
                try index.forEachRawLine(from: state.covered, to: offset) { line, at in
                    CatalogSummary.deriveLine(line, at: at, into: &lines)
                }
            }
            bytes.withUnsafeBufferPointer { CatalogSummary.derive($0, at: offset, into: &lines) }
            guard ftruncate(fd, off_t(state.complete)) == 0 else { return false }
            let written = lines.withUnsafeBytes { buffer in
                POSIX.retrying { pwrite(fd, buffer.baseAddress, buffer.count, off_t(state.complete)) }
            }
            return written == lines.count
        } catch {
            return false
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
    func rebuildIndex(digits: Int? = nil) throws {
        let digits = try digits ?? currentDigits()
        try writeIndex(to: layout.index) { emit in
            var lines = JSONWriter(capacity: 1 << 20)
            try forEachRecord(digits: digits) { key, issue in
                CatalogIndex.line(key: key, issue: issue, into: &lines)
                if lines.bytes.count > 1 << 20 {
                    try emit(lines.bytes)
                    lines.removeAll()
                }
            }
            try emit(lines.bytes)
        }
    }

    /// Calls `body` with every record in key order. A damaged bucket stops the walk with its error.
    func forEachRecord(digits: Int, _ body: (String, Issue) throws -> Void) throws {
        try forEachBucket(digits: digits) { bucket in
            for (key, issue) in try bucket.issues().sorted(by: { $0.key < $1.key }) { try body(key, issue) }
        }
    }

    /// Calls `body` with every bucket file of depth `digits`, in key order.
    func forEachBucket(digits: Int, _ body: (CatalogBucket) throws -> Void) throws {
        for path in bucketPaths(digits: digits) { try body(try CatalogBucket.load(path)) }
    }

    /// The bucket files of depth `digits`, in name order.
    private func bucketPaths(digits: Int) -> [String] {
        let folder = layout.records(digits: digits)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        return names.filter { $0.hasSuffix(".jsonl") && !$0.hasPrefix(".") }.map { "\(folder)/\($0)" }
    }

    /// Every issue and folder claim of depth `digits`, read and decoded on up to `threads` threads: decoding
    /// is most of reading a whole catalog (`verify` at 100,000 issues).
    /// - Throws: A bucket's error when one cannot be read (``Stripes/map(count:threads:_:)``'s first).
    func allRecords(digits: Int, threads: Int = ProcessInfo.processInfo.activeProcessorCount)
        throws -> (issues: [String: Issue], claims: [String: String])
    {
        let paths = bucketPaths(digits: digits)
        let stripes = try Stripes.map(count: paths.count, threads: threads) { indices in
            var found: (issues: [(key: String, issue: Issue)], claims: [(key: String, owner: String)]) = ([], [])
            for index in indices {
                let bucket = try CatalogBucket.load(paths[index])
                found.issues += try bucket.issues()
                found.claims += bucket.claims()
            }
            return found
        }
        var issues: [String: Issue] = [:]
        var claims: [String: String] = [:]
        issues.reserveCapacity(stripes.reduce(0) { $0 + $1.issues.count })
        for found in stripes {
            for (key, issue) in found.issues { issues[key] = issue }
            for (key, owner) in found.claims { claims[key] = owner }
        }
        return (issues, claims)
    }

    /// Writes a whole index file through `fill`, and its summary (``CatalogSummary``) beside it, and moves
    /// both into place atomically, the index first. The header's `liveBytes` is written last, into room left for it.
    /// The summary is derived, so failing to write it (something else in its place) fails nothing: `list` then
    /// reads the index, and the failure is logged.
    func writeIndex(to path: String, _ fill: (_ emit: ([UInt8]) throws -> Void) throws -> Void) throws {
        let id = CatalogIndex.newID()
        let index = try TemporaryFile(beside: path)
        let placeholder = [UInt8](repeating: 0x20, count: 79) + [0x0A]
        let summaryPath = CatalogSummary.path(besideIndex: path)
        var summary = SummaryWriter(path: summaryPath, indexID: id, start: placeholder.count)
        try index.write(placeholder)
        var live = 0
        try fill { bytes in
            bytes.withUnsafeBufferPointer { summary.add(lines: $0, at: placeholder.count + live) }
            live += bytes.count
            try index.write(bytes)
        }
        var header = CatalogIndex.header(liveBytes: live, id: id)
        header.removeLast()
        header += [UInt8](repeating: 0x20, count: max(0, placeholder.count - 1 - header.count)) + [0x0A]
        _ = header.withUnsafeBytes { pwrite(index.fd, $0.baseAddress, $0.count, 0) }
        if durable { try POSIX.fsync(index.fd, path: index.path) }
        try index.move(to: path)
        summary.finish(logger: logger)
        if durable { try POSIX.fsyncDirectory((path as NSString).deletingLastPathComponent) }
    }

    /// Writes the summary of the index `index` (whose lines start at `start`) again, from its lines.
    func rewriteSummary(of index: CatalogIndexReader, indexID: String, start: Int) throws {
        var summary = SummaryWriter(path: CatalogSummary.path(besideIndex: index.path), indexID: indexID, start: start)
        try index.forEachRawLine(from: start, to: try index.head().file) { line, offset in
            summary.add(line: line, at: offset)
        }
        summary.finish(logger: logger)
    }
}

/// A summary being written beside a new index: best effort, as it is derived. Not flushed: a summary that a power
/// cut shortens or damages is noticed and read past (see ``CatalogSummary``).
private struct SummaryWriter {
    let path: String
    private var file: TemporaryFile?
    private var failure: (any Error)?
    private var lines: [UInt8] = []

    init(path: String, indexID: String, start: Int) {
        self.path = path
        do {
            let file = try TemporaryFile(beside: path)
            try file.write(CatalogSummary.header(indexID: indexID, start: start))
            self.file = file
        } catch {
            failure = error
        }
    }

    /// Adds the summary lines of `lines`, whole index lines the first of which starts at `offset`.
    mutating func add(lines: UnsafeBufferPointer<UInt8>, at offset: Int) {
        CatalogSummary.derive(lines, at: offset, into: &self.lines)
        if self.lines.count > 1 << 20 { flush() }
    }

    /// Adds the summary line of one index line (without its newline) that starts at `offset`.
    mutating func add(line: UnsafeBufferPointer<UInt8>, at offset: Int) {
        CatalogSummary.deriveLine(line, at: offset, into: &lines)
        if lines.count > 1 << 20 { flush() }
    }

    private mutating func flush() {
        defer { lines.removeAll(keepingCapacity: true) }
        guard let file else { return }
        do {
            try file.write(lines)
        } catch {
            failure = error
            self.file = nil
        }
    }

    /// Moves the summary into place, or logs why there is none.
    mutating func finish(logger: Logger?) {
        flush()
        if let file {
            do {
                try file.move(to: path)
                return
            } catch {
                failure = error
            }
        }
        logger?.warning(
            "the catalog's summary was not written (\(failure.map { "\($0)" } ?? "unknown")); `list` reads the index instead"
        )
    }
}

/// A new file beside `path` (never one that a link in its place points to), deleted unless moved into place.
private final class TemporaryFile {
    let path: String
    let fd: Int32
    private var open = true

    init(beside target: String) throws {
        path = LibraryLayout.temporary(beside: target)
        // A killed writer's file of this pid goes first.
        try POSIX.unlinkIfPresent(path)
        fd = try POSIX.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
    }

    deinit {
        if open {
            _ = close(fd)
            _ = unlink(path)
        }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: path) }
    }

    func move(to target: String) throws {
        open = false
        _ = close(fd)
        do {
            try POSIX.rename(path, target)
        } catch {
            _ = unlink(path)
            throw error
        }
    }
}
