// libFuzzer target for the catalog's own formats, fed raw bytes as a damaged or hostile file would be:
// an issue record (`IssueRecord.decode`), a line of the index (`CatalogIndex.parse`) and a bucket file
// (`CatalogBucket`), built with the product files the Makefile lists (see `make fuzz`). Beyond "no
// crash", what the catalog accepts it must write back so that it reads the same again, and the one-asset
// read (`IssueRecord.decodeAsset`, what a download reads as it starts an asset) must agree with the whole
// decode on every asset of a record the whole decode accepts.
import FuzzSupport
import NewsstandCatalog
import NewsstandCore
import Foundation

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
    }

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
