import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandDownload

/// Adding many issues at once, and writing issues out in the same format (`issues import`/`export`).
extension Library {
    /// Issues an import commits per transaction: a few MiB of staged records, and one flush per batch.
    static let importBatch = 5_000

    /// Adds every issue of an import document (see ``IssueExchange``): a JSON array, JSON Lines, or a
    /// catalog object. Each issue is added or refused on its own (a duplicate of a listed issue or of an
    /// earlier one in the input, a bad name, date, URL or checksum); the others go on. Issues are
    /// written in batches of ``importBatch``, each batch one catalog transaction (so memory stays bounded whatever
    /// the count, and a kill keeps the batches committed before it).
    /// - Parameters:
    ///   - data: The document.
    ///   - source: How to name the input in errors (a path, or "standard input").
    /// - Returns: What was added and what was refused, in input order.
    /// - Throws: `.invalidImport` when the document is not JSON of issues (the issues before the error
    ///   stay added and are in no report: run the import again after fixing the file to see them).
    public func importIssues(from data: Data, source: String) async throws -> ImportReport {
        let catalog = self.catalog
        return try await runBlocking {
            var report = ImportReport()
            var batch: [IssueExchange.Item] = []
            var seen = Set<String>()
            func flush() throws {
                let items = batch
                batch.removeAll()
                try catalog.write { changes in
                    for item in items {
                        switch item.result {
                        case .failure(let refusal):
                            report.refused.append(.init(index: item.index, name: item.name, reason: refusal.reason))
                        case .success(let definition):
                            do {
                                _ = try Library.stageNewIssue(
                                    named: definition.name, date: definition.date, assets: definition.assets,
                                    publication: item.publication, in: &changes)
                                report.added.append(definition.name)
                            } catch let error as NewsstandError where error.code == .duplicateIssue {
                                report.refused.append(.init(index: item.index, name: item.name, reason: error.message))
                            }
                        }
                    }
                }
            }
            try data.withUnsafeBytes { raw in
                try IssueExchange.read(raw.bindMemory(to: UInt8.self), source: source) { item in
                    var item = item
                    if case .success(let definition) = item.result,
                        !seen.insert(IssueName.canonical(definition.name)).inserted
                    {
                        item.result = .failure(.init("the name \(definition.name.debugDescription) appears twice in \(source)"))
                    }
                    batch.append(item)
                    if batch.count == Library.importBatch { try flush() }
                }
            }
            try flush()
            return report
        }
    }

    /// Writes the named issues (every issue, newest first, when `names` is nil) in the exchange format:
    /// a JSON array, one issue per line, with states.
    ///
    /// Assets' request headers are secrets (an `Authorization`, a cookie): they are left out unless
    /// `includeHeaders` is set, and the report counts the assets whose headers were left out.
    /// - Parameters:
    ///   - names: Issue names, or nil for every issue.
    ///   - output: Where the JSON goes.
    ///   - includeHeaders: Write each asset's request headers in full (for a backup or a move).
    /// - Returns: How many issues were written, and how many assets' headers were left out.
    /// - Throws: `.issueNotFound` before writing anything when a named issue does not exist.
    @discardableResult
    public func exportIssues(
        named names: [String]? = nil, to output: FileHandle, includeHeaders: Bool = false
    ) async throws -> ExportReport {
        let catalog = self.catalog
        let fd = output.fileDescriptor
        let root = layout.root
        return try await runBlocking {
            var issues: [Issue] = []
            var out = JSONWriter(capacity: 1 << 20)
            var report = ExportReport()
            func emit(_ issue: Issue, first: Bool) throws {
                out.raw(first ? "\n" : ",\n")
                IssueExchange.write(issue, includeHeaders: includeHeaders, into: &out)
                report.issues += 1
                if !includeHeaders { report.assetsWithHeadersLeftOut += issue.assets.filter { !$0.headers.isEmpty }.count }
                if out.bytes.count > 1 << 20 {
                    try Library.write(out.bytes, to: fd)
                    out.removeAll()
                }
            }
            out.raw("[")
            var count = 0
            if let names {
                for name in names {
                    guard let issue = try catalog.issue(named: name), !issue.isBeingRemoved else {
                        throw NewsstandError.issueNotFound(name, in: root)
                    }
                    issues.append(issue)
                }
                for issue in issues {
                    try emit(issue, first: count == 0)
                    count += 1
                }
            } else {
                try catalog.forEachRecord(live: true) { key, record in
                    try emit(try IssueRecord.decode(record, path: catalog.recordPath(key)), first: count == 0)
                    count += 1
                }
            }
            out.raw(count == 0 ? "]\n" : "\n]\n")
            try Library.write(out.bytes, to: fd)
            return report
        }
    }
}

/// What ``Library/exportIssues(named:to:includeHeaders:)`` wrote.
public struct ExportReport: Sendable, Hashable {
    /// Issues written.
    public internal(set) var issues = 0
    /// Assets that have request headers which were not written (export without `includeHeaders`).
    public internal(set) var assetsWithHeadersLeftOut = 0
}
