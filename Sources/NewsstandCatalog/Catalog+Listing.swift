// `struct stat` reaches Swift through the shim module.
internal import CSystemShims
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Reading what `list` shows: the summary, and the index after it.
extension Catalog {
    /// The live issues with `status` (all when nil), newest first, from the summary when it mirrors the index
    /// (then only the index lines after it are read), else from the whole index.
    /// - Parameter summary: False to read the whole index even when there is a summary (what `verify` compares).
    package func listing(status: Issue.Status? = nil, summary: Bool = true) throws -> IssueListing {
        let index = try openIndex()
        let head = try index.head()
        if summary, let id = head.id, let (fd, info) = POSIX.openSoleFile(layout.summary, O_RDONLY) {
            defer { _ = close(fd) }
            // About 150 bytes a summary line: sized once instead of grown.
            var builder = IssueListingBuilder(lines: Int(info.st_size) / 150 + 1024)
            if let covered = try? readSummary(fd, indexID: id, upTo: head.file, unique: head.rewritten, into: &builder)
            {
                try readIndexLines(index, from: covered, to: head.file, unique: head.rewritten, into: &builder)
                return builder.listing(status: status)
            }
        }
        // About 800 bytes an index line with two assets.
        var builder = IssueListingBuilder(lines: head.file / 800 + 1024)
        try readIndexLines(index, from: 0, to: head.file, unique: head.rewritten, into: &builder)
        return builder.listing(status: status)
    }

    /// Adds the summary's lines that mirror index lines ending by `end`, and returns where in the index the
    /// last of them ends. Throws when the summary is not of the index with `indexID` or a line is not as written.
    /// - Parameter unique: The end of the index's lines that its last rewrite wrote (one line per issue).
    private func readSummary(
        _ fd: Int32, indexID: String, upTo end: Int, unique: Int, into builder: inout IssueListingBuilder
    ) throws -> Int {
        var covered: Int?
        var past = false
        try LineFile.forEachLine(fd, path: layout.summary) { line, offset in
            guard !past else { return }
            if offset == 0 {
                let object = try JSONReader.parseObject(line, skipping: nil)
                guard object["index"] == .string(indexID), case .integer(let start)? = object["end"] else {
                    throw IssueListingBuilder.Unexpected()
                }
                covered = Int(start)
                return
            }
            guard let lineEnd = CatalogSummary.end(of: line), let last = covered, lineEnd > last else {
                throw IssueListingBuilder.Unexpected()
            }
            // Past the snapshot of the index: lines appended since, left out with the index's.
            guard lineEnd <= end else {
                past = true
                return
            }
            try builder.addSummaryLine(line, unique: lineEnd <= unique)
            covered = lineEnd
        }
        guard let covered else { throw IssueListingBuilder.Unexpected() }
        return covered
    }

    private func readIndexLines(
        _ index: CatalogIndexReader, from start: Int, to end: Int, unique: Int, into builder: inout IssueListingBuilder
    ) throws {
        try index.forEachRawLine(from: start, to: end) { line, offset in
            do {
                try builder.addIndexLine(line, offset: offset, unique: offset + line.count + 1 <= unique)
            } catch let error as JSONSyntaxError {
                throw NewsstandError(
                    .manifestUnreadable,
                    "\(index.path) is damaged at byte \(offset + error.offset) (\(error.reason)); run `issues verify --repair` to rebuild it from the issue records",
                    underlying: error)
            }
        }
    }
}
