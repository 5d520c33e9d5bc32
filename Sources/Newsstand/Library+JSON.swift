import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandDownload
import NewsstandSubscriptions

#if canImport(Glibc)
    import Glibc
#endif

/// The `--json` output of issues. One issue is an ``IssueReport``; `list --json` streams its array by hand
/// from the stored records (each issue object is its record with the report's counts, folder and version
/// put in front), because decoding and encoding every record costs what `list --json` is allowed: at
/// 100,000 issues the hand-written stream took 0.69 s (README, Performance) against the 1 s target. A test
/// holds the stream to the report type (`ReportShapeTests`). Assets in flight show the bytes on disk right
/// now; request header values are redacted (the stored record keeps them whole).
extension Library {
    /// One issue's report: assets in flight show the bytes on disk now, header values are redacted.
    /// - Parameter issue: The issue, e.g. from ``issue(named:)``.
    public nonisolated func report(for issue: Issue) -> IssueReport {
        IssueReport(
            live(issue), directory: layout.contentFolder(issue.folderName),
            recordVersion: Int(IssueRecord.version(of: issue)))
    }

    /// Writes the JSON array of every issue (newest first), one issue per line, to `output` as it
    /// goes: memory follows the number of issues, not their size. Blocking work runs off the pool.
    /// - Parameters:
    ///   - status: Only issues with this status, when given.
    ///   - output: Where the text goes (stdout for `list --json`).
    public func writeJSONList(status: Issue.Status? = nil, to output: FileHandle) async throws {
        try await writeJSONList(IssueFilter(status: status), to: output)
    }

    /// Writes the JSON array of the issues `filter` passes (newest first), as ``writeJSONList(status:to:)``.
    public func writeJSONList(_ filter: IssueFilter, to output: FileHandle) async throws {
        let status = filter.status
        let catalog = self.catalog
        let fd = output.fileDescriptor
        try await runBlocking {
            var out = JSONWriter(capacity: 1 << 20)
            out.raw("[")
            var written = 0
            try catalog.forEachRecord(status: status) { key, bytes in
                let issue = try IssueRecord.decode(bytes, path: catalog.recordPath(key))
                guard filter.matches(issue) else { return }
                out.raw(written == 0 ? "\n" : ",\n")
                written += 1
                // Bytes in flight are read from disk, and header values are redacted.
                self.writeJSON(self.redacted(self.live(issue)), into: &out)
                if out.bytes.count > 1 << 20 {
                    try Library.write(out.bytes, to: fd)
                    out.removeAll()
                }
            }
            out.raw(written == 0 ? "]\n" : "\n]\n")
            try Library.write(out.bytes, to: fd)
        }
    }

    /// The issue with its assets' request header values redacted, for output.
    nonisolated func redacted(_ issue: Issue) -> Issue {
        var issue = issue
        for index in issue.assets.indices where !issue.assets[index].headers.isEmpty {
            issue.assets[index].headers = issue.assets[index].redactedHeaders
        }
        return issue
    }

    /// The issue with each asset in flight showing the bytes on disk now (here or in another process).
    nonisolated func live(_ issue: Issue) -> Issue {
        var issue = issue
        for index in issue.assets.indices where issue.assets[index].state == .downloading {
            let id = issue.assets[index].id
            if let onDisk = bytesOnDisk(assetID: id) { issue.assets[index].receivedBytes = onDisk }
            if issue.assets[index].expectedBytes == nil {
                issue.assets[index].expectedBytes = expectedBytesOnDisk(assetID: id)
            }
        }
        return issue
    }

    /// The issue as ``IssueReport`` has it: the prefix, then its record with the cover's source moved out of
    /// `assets` to `coverSource`.
    nonisolated func writeJSON(_ issue: Issue, into writer: inout JSONWriter) {
        let split = issue.assetsAndCoverSource
        var content = issue
        content.assets = split.content
        var record = JSONWriter(capacity: 1024)
        content.write(to: &record)
        writePrefix(IssueSummary(issue), into: &writer)
        guard let cover = split.cover else {
            record.bytes.withUnsafeBufferPointer { writer.append(UnsafeBufferPointer(rebasing: $0.dropFirst())) }
            return
        }
        record.bytes.withUnsafeBufferPointer { writer.append(UnsafeBufferPointer(rebasing: $0.dropFirst().dropLast())) }
        writer.key("coverSource")
        cover.write(to: &writer)
        writer.raw("}")
    }

    /// `{"assetsDone":…,"assetsTotal":…,"bytes":…,"directory":"…",` (and `"pinned":false` unless the
    /// record says `"pinned":true`) — the record's members follow.
    private nonisolated func writePrefix(_ summary: IssueSummary, into writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("assetsDone", first: true)
        writer.integer(Int64(summary.assetsDone))
        writer.key("assetsTotal")
        writer.integer(Int64(summary.assetsTotal))
        writer.key("bytes")
        writer.integer(summary.bytes)
        writer.key("directory")
        writer.string(layout.contentFolder(summary.folderName))
        writer.key("reportVersion")
        writer.integer(Int64(IssueReport.reportVersion))
        if !summary.isPinned {
            // The record itself carries `"pinned":true` when pinned, so the key is always present once.
            writer.key("pinned")
            writer.bool(false)
        }
        writer.raw(",")
    }

    /// Writes all of `bytes`; a reader that went away (`EPIPE`, as with `| head`) ends the output quietly.
    static func write(_ bytes: [UInt8], to fd: Int32) throws {
        guard let code = bytes.withUnsafeBytes({ POSIX.writeAllOrErrno(fd, $0) }), code != EPIPE else { return }
        throw NewsstandError.posix(code, "cannot write", path: "standard output")
    }
}

extension Library {
    /// The reports of `subscriptions`, for `subscriptions --json` and the API.
    public nonisolated func reports(for subscriptions: [Subscription]) -> [SubscriptionReport] {
        subscriptions.map(SubscriptionReport.init)
    }
}
