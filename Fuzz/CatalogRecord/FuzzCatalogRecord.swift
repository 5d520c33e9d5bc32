import Foundation
// libFuzzer target for what the catalog reads from outside data, fed raw bytes as a damaged or hostile file
// would be: an issue record (`IssueRecord.decode`, the JSON in the database's `record` column and in an
// import), a stored event (`CatalogEvent.decode`), a bucket file of a version 2 or 3 library that the upgrade
// reads (`CatalogBucket`), and, for inputs that start as an SQLite file does, a damaged database
// (`.catalog/catalog.sqlite`) that every read must refuse with an error or read, never crash on. Built with
// the product files the Makefile lists (see `make fuzz`). Beyond "no crash", what the catalog accepts it must
// write back so that it reads the same again; the one-asset read (`IssueRecord.decodeAsset`) must agree with
// the whole decode; and a record put into a real catalog lists as its summary says.
import FuzzSupport
import NewsstandCatalog
import NewsstandCore

/// One scratch library per process, emptied for each input.
nonisolated(unsafe) private var scratch: String?

private func freshLibrary() -> LibraryLayout {
    let root = scratch ?? {
        let path = NSTemporaryDirectory() + "fuzz-catalog-\(getpid())"
        scratch = path
        return path
    }()
    try? FileManager.default.removeItem(atPath: root)
    try? FileManager.default.createDirectory(atPath: root + "/.catalog", withIntermediateDirectories: true)
    return LibraryLayout(root: root)
}

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
        // Put into a real catalog, it reads back whole and lists as its summary says.
        let catalog = Catalog(layout: freshLibrary(), durable: false)
        do {
            try catalog.prepare(create: true)
            try catalog.write { try $0.put(issue) }
        } catch {
            fatalError("an accepted record cannot be stored (\(error))")
        }
        var stored = issue
        stored.updateStatus()
        guard (try? catalog.issue(named: issue.name)) == stored else { fatalError("a stored record reads back otherwise") }
        guard let listed = try? Array(catalog.listing()), listed == [IssueSummary(stored)] else {
            fatalError("the listing of a stored record differs from its summary")
        }
    }

    _ = try? IssueRecord.decodeAsset("a", ofIssueNamed: "x", in: input, path: "fuzz")
    if let event = try? CatalogEvent.decode(input, path: "fuzz") {
        let line = event.encoded().dropLast()
        guard let again = try? Array(line).withUnsafeBufferPointer({ try CatalogEvent.decode($0, path: "again") }),
            again.id == event.id, again.kind == event.kind, again.issue == event.issue
        else { fatalError("an accepted event, written back, does not read the same") }
    }
    if let bucket = try? CatalogBucket(path: "fuzz", data: Data(buffer: input)) {
        _ = try? bucket.issues()
    }

    // A damaged database: refused with an error or read, never a crash, and never rebuilt over.
    if input.starts(with: Array("SQLite format 3".utf8)) {
        let layout = freshLibrary()
        _ = FileManager.default.createFile(atPath: layout.database, contents: Data(buffer: input))
        _ = FileManager.default.createFile(atPath: layout.manifest, contents: Data(#"{"version":4}"#.utf8))
        let catalog = Catalog(layout: layout, durable: false)
        _ = try? catalog.prepare(create: false)
        _ = try? catalog.integrityProblems()
        if let listing = try? catalog.listing() { listing.forEachRow { _, _, _ in } }
        _ = try? catalog.allRecords(threads: 1)
        _ = try? catalog.pendingMarkers()
        _ = try? catalog.readEvents(after: 0)
        _ = try? catalog.write { try $0.put(Issue(name: "n", date: IssueDate(uncheckedYear: 2026, month: 1, day: 1), folderName: "n")) }
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
