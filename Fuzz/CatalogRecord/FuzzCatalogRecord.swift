import Foundation
// libFuzzer target for the catalog's own formats, fed raw bytes as a damaged or hostile file would be:
// an issue record (`IssueRecord.decode`), a line of the index (`CatalogIndex.parse`), a bucket file
// (`CatalogBucket`), and lines of the index and its summary as `list` reads them (`IssueListingBuilder`), built with the product files the Makefile lists (see `make fuzz`). Beyond "no
// crash", what the catalog accepts it must write back so that it reads the same again, and the one-asset
// read (`IssueRecord.decodeAsset`, what a download reads as it starts an asset) must agree with the whole
// decode on every asset of a record the whole decode accepts.
import FuzzSupport
import NewsstandCatalog
import NewsstandCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalogRecord(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)

    if let issue = try? IssueRecord.decode(input, path: "fuzz") {
        let bytes = IssueRecord.encode(issue)
        let again: Issue
        do {
            again = try bytes.withUnsafeBufferPointer { try IssueRecord.decode($0, path: "again") }
        } catch {
            fatalError("an accepted record, written back, does not read (\(error))")
        }
        guard again == issue else { fatalError("a record changed on a round trip") }
        for asset in issue.assets {
            let standing: AssetStanding?
            do {
                standing = try IssueRecord.decodeAsset(asset.id, ofIssueNamed: issue.name, in: input, path: "fuzz")
            } catch {
                fatalError("the one-asset read refuses what the whole decode accepts (\(error))")
            }
            guard let standing, standing.asset == asset, standing.isBeingRemoved == issue.isBeingRemoved,
                standing.hasOrigin == (issue.origin != nil)
            else { fatalError("the one-asset read disagrees with the whole decode") }
        }
        // Its index line reads back with the same summary and the record's bytes at the stated place.
        var line = JSONWriter()
        CatalogIndex.line(key: String(repeating: "a", count: 32), issue: issue, into: &line)
        let text = Array(line.bytes.dropLast())  // without the newline
        guard case .issue(let entry)? = try? text.withUnsafeBufferPointer({ try CatalogIndex.parse($0, offset: 0) }),
            entry.summary == IssueSummary(issue),
            Array(text[entry.recordOffset..<(entry.recordOffset + Int(entry.recordLength))]) == Array(bytes.dropLast())
        else { fatalError("the index line of an accepted record does not read back") }
        // `list` reads the same issue from the index line and from its summary line, by position.
        var summary: [UInt8] = []
        line.bytes.withUnsafeBufferPointer { CatalogSummary.derive($0, at: 100, into: &summary) }
        let summaryLine = Array(summary.dropLast())
        guard summaryLine.withUnsafeBufferPointer({ CatalogSummary.end(of: $0) }) == 100 + line.bytes.count else {
            fatalError("a summary line does not end where its index line does")
        }
        for unique in [false, true] {
            var fromIndex = IssueListingBuilder(lines: 1)
            var fromSummary = IssueListingBuilder(lines: 1)
            do {
                try text.withUnsafeBufferPointer { try fromIndex.addIndexLine($0, offset: 0, unique: unique) }
                try summaryLine.withUnsafeBufferPointer { try fromSummary.addSummaryLine($0, unique: unique) }
            } catch {
                fatalError("the lines of an accepted record do not list (\(error))")
            }
            let listed = Array(fromIndex.listing(status: nil))
            guard listed == [IssueSummary(issue)], Array(fromSummary.listing(status: nil)) == listed else {
                fatalError("the listing of an accepted record differs from its summary")
            }
        }
    }

    // Any lines, as a damaged summary or index holds them: refused or listed, never a crash.
    var builder = IssueListingBuilder(lines: 16)
    var start = 0
    for (index, byte) in input.enumerated() where byte == 0x0A || index == input.count - 1 {
        let end = byte == 0x0A ? index : index + 1
        let piece = UnsafeBufferPointer(rebasing: input[start..<end])
        _ = try? builder.addSummaryLine(piece, unique: start == 0)
        _ = try? builder.addIndexLine(piece, offset: start, unique: start % 3 == 0)
        _ = CatalogSummary.end(of: piece)
        start = index + 1
    }
    let listing = builder.listing(status: nil)
    listing.forEachRow { _, _, _ in }
    _ = Array(listing)

    _ = try? IssueRecord.decodeAsset("a", ofIssueNamed: "x", in: input, path: "fuzz")
    _ = try? CatalogIndex.parse(input, offset: 0)

    if let bucket = try? CatalogBucket(path: "fuzz", data: Data(buffer: input)) {
        for line in bucket.lines where line.kind == .issue { _ = try? CatalogBucket.decodeIssue(line, path: "fuzz") }
        _ = bucket.claims()
        let again: CatalogBucket
        do {
            again = try CatalogBucket(path: "again", data: Data(bucket.encoded()))
        } catch {
            fatalError("an accepted bucket, written back, does not read (\(error))")
        }
        guard again.lines.count == bucket.lines.count else { fatalError("a bucket lost lines on a round trip") }
    }
    return 0
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzCatalogRecord) }
    }
#endif
