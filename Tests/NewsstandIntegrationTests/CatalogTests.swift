import Foundation
import Logging
import NewsstandTestSupport
import Synchronization
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

#if canImport(Glibc)
    import Glibc
#endif

/// The catalog's records, index and folder claims, through the library and directly.
@Suite(.timeLimit(.minutes(5))) struct CatalogTests {
    let date = IssueDate("2026-11-20")!

    func catalog(_ root: URL, slack: Int = 8 << 20) throws -> Catalog {
        let catalog = Catalog(layout: LibraryLayout(root: root.path), durable: false, compactionSlack: slack)
        try catalog.prepare(create: true)
        return catalog
    }

    func sampleIssue(_ name: String = "The Daily 2026-11-20") throws -> Newsstand.Issue {
        var issue = Newsstand.Issue(name: name, date: try #require(IssueDate("2026-11-20")), folderName: "The Daily")
        var asset = AssetDownload(
            id: "0123456789abcdef", url: try #require(URL(string: "https://example.com/a.zip")),
            sha256: String(repeating: "a", count: 64))
        asset.state = .downloaded
        asset.receivedBytes = 42
        asset.expectedBytes = 42
        asset.userInfo = ["k": "v"]
        issue.assets = [asset]
        issue.updateStatus()
        return issue
    }

    // MARK: Records

    @Test func recordRoundTrip() throws {
        let issue = try sampleIssue()
        let bytes = IssueRecord.encode(issue)
        let decoded = try bytes.withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r.json") }
        #expect(decoded == issue)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"version\":2"))
    }

    @Test(arguments: [
        "plain", "quote \" and backslash \\", "tab\tnew\nline\r", "nul \u{0} bell \u{7}", "東京 🗞️ é", "\u{2028}\u{FEFF}",
        "",
    ])
    func stringsSurviveARecord(_ text: String) throws {
        var issue = Newsstand.Issue(name: text.isEmpty ? "empty" : text, date: date, folderName: "f")
        var asset = AssetDownload(id: "0123456789ab", url: try #require(URL(string: "http://127.0.0.1/x")))
        asset.error = text
        asset.userInfo = [text: text]
        issue.assets = [asset]
        let bytes = IssueRecord.encode(issue)
        #expect(try bytes.withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r.json") } == issue)
    }

    /// A run reads each asset it starts by itself (``IssueRecord/decodeAsset(_:ofIssueNamed:in:path:)``):
    /// the same asset as the whole decode gives, the issue's flags, and nothing for another issue or id.
    @Test func oneAssetReadsAsTheWholeRecordHasIt() async throws {
        var issue = try sampleIssue()
        for index in 0..<5 {
            var asset = AssetDownload(
                id: "a\(index)", url: try #require(URL(string: "https://cdn.example.com/issue/\(index).pdf?sig=x")),
                headers: ["Authorization": "Bearer \(index)"])
            asset.state = index % 2 == 0 ? .failed : .pending
            asset.error = index % 2 == 0 ? "HTTP 503 \"busy\"" : nil
            issue.assets.append(asset)
        }
        issue.isBeingRemoved = true
        let bytes = IssueRecord.encode(issue)
        try bytes.withUnsafeBufferPointer { record in
            for asset in issue.assets {
                let standing = try #require(try IssueRecord.decodeAsset(asset.id, ofIssueNamed: issue.name, in: record, path: "r"))
                #expect(standing.asset == asset)
                #expect(standing.isBeingRemoved)
                #expect(!standing.hasOrigin)
            }
            #expect(try IssueRecord.decodeAsset("missing", ofIssueNamed: issue.name, in: record, path: "r") == nil)
            #expect(try IssueRecord.decodeAsset("a1", ofIssueNamed: "Another issue", in: record, path: "r") == nil)
        }
        // Through the catalog, as a download reads it.
        issue.isBeingRemoved = false
        issue.origin = Newsstand.Issue.Origin(subscriptionID: "s", itemID: "i")
        let stored = issue
        try await withTemporaryDirectory { root in
            let catalog = try self.catalog(root)
            try catalog.write { changes in try changes.put(stored) }
            let standing = try #require(try catalog.assetStanding("a3", ofIssueNamed: stored.name))
            #expect(standing.asset == stored.assets[4])
            #expect(!standing.isBeingRemoved)
            #expect(standing.hasOrigin)
            #expect(try catalog.assetStanding("a3", ofIssueNamed: "No such issue") == nil)
        }
    }

    @Test(arguments: [
        // The asset listed twice; a removal flag that is not a boolean; a record from a newer version.
        #"{"assets":[{"id":"a"},{"id":"a"}],"name":"x"}"#,
        #"{"assets":[],"name":"x","removing":"yes"}"#,
        #"{"assets":[{"id":"a","url":"http://127.0.0.1/a","state":"pending","receivedBytes":0,"unpack":true}],"name":"x","version":99}"#,
        #"{"assets":[{"id":"a"}"#,
    ])
    func oneAssetRefusesWhatTheWholeDecodeRefuses(_ text: String) throws {
        #expect(throws: NewsstandError.self) {
            try Array(text.utf8).withUnsafeBufferPointer { try IssueRecord.decodeAsset("a", ofIssueNamed: "x", in: $0, path: "r") }
        }
    }

    /// A newer version's record whose asset this version cannot read is named as from a newer version,
    /// as the whole decode names it, not as damaged (the version comes after `assets` in the sorted keys).
    @Test func oneAssetOfANewerVersionIsNamedAsSuch() throws {
        let text = #"{"assets":[{"id":"a","state":"teleported"}],"name":"x","version":99}"#
        let error = try #require(throws: NewsstandError.self) {
            try Array(text.utf8).withUnsafeBufferPointer { try IssueRecord.decodeAsset("a", ofIssueNamed: "x", in: $0, path: "r") }
        }
        #expect(error.code == .manifestFromNewerVersion)
    }

    @Test func readsEscapesAndSurrogatePairs() throws {
        let text = #"{"name":"\u00e9\ud83d\uddde\/\"","date":"2026-11-20","folder":"f","status":"none","assets":[]}"#
        let issue = try Array(text.utf8).withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r.json") }
        #expect(issue.name == "é🗞/\"")
    }

    @Test(arguments: [
        "", "{", "null", "[]", "{\"name\":\"x\"}",
        "{\"name\":\"x\",\"date\":\"2026-02-30\",\"folder\":\"x\",\"status\":\"none\"}",
        "{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"../x\",\"status\":\"none\"}",
        "{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"library.json\",\"status\":\"none\"}",
        "{\"name\":\"x\",\"name\":\"y\",\"date\":\"2026-01-01\",\"folder\":\"x\",\"status\":\"none\"}",
        "{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"x\",\"status\":\"none\",\"assets\":[{\"id\":\"a\",\"url\":\"http://h/x\",\"state\":\"pending\",\"receivedBytes\":-1}]}",
        "{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"x\",\"status\":\"none\",\"assets\":[{\"id\":\"a\",\"url\":\"http://h/x\",\"state\":\"pending\"},{\"id\":\"a\",\"url\":\"http://h/y\",\"state\":\"pending\"}]}",
        "{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"x\",\"status\":\"none\",\"assets\":[{\"id\":\"a/b\",\"url\":\"http://h/x\",\"state\":\"pending\"}]}",
    ])
    func damagedRecordsAreRefusedByName(_ text: String) {
        #expect {
            _ = try Array(text.utf8).withUnsafeBufferPointer { try IssueRecord.decode($0, path: "/lib/r.json") }
        } throws: { error in
            let error = error as? NewsstandError
            return error?.code == .manifestUnreadable && error?.message.contains("/lib/r.json") == true
        }
    }

    @Test func newerRecordVersionIsRefused() {
        // Version 3 is a filed issue's record (layout templates): the first this version cannot read is 4.
        let text = #"{"name":"x","date":"2026-01-01","folder":"x","status":"none","version":"# + "\(IssueRecord.newestVersion + 1)}"
        #expect {
            _ = try Array(text.utf8).withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r.json") }
        } throws: { ($0 as? NewsstandError)?.code == .manifestFromNewerVersion }
    }

    @Test func keysFollowCanonicalEquivalence() {
        // Swift compares names by canonical equivalence; both spellings must find one record.
        #expect(Catalog.key(for: "Caf\u{E9}") == Catalog.key(for: "Cafe\u{301}"))
        #expect(Catalog.key(for: "Café") != Catalog.key(for: "Cafe"))
        #expect(Catalog.isKey(Catalog.key(for: "x")))
        let key = Catalog.key(for: "The Daily 2026-11-20")
        #expect(CatalogIndex.Key(key)?.text == key)
        #expect(CatalogIndex.Key("00000000000000000000000000000001")?.text == "00000000000000000000000000000001")
        for bad in ["", "0", String(repeating: "0", count: 33), String(repeating: "A", count: 32), "g" + key.dropFirst()] {
            #expect(CatalogIndex.Key(bad) == nil, "\(bad)")
        }
    }

    // MARK: Through the library

    @Test func aDamagedRecordIsNamedAndNeverOverwritten() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: date)
            let key = Catalog.key(for: "A")
            let path = LibraryLayout(root: root.path).bucket(key, digits: 2)
            let garbage = Data("{\"key\":\"\(key)\",\"issue\":{\"name\": \"A\", \"date\"}\n".utf8)
            try garbage.write(to: URL(fileURLWithPath: path))
            for attempt in [
                { _ = try await library.issue(named: "A") },
                { _ = try await library.addIssue(named: "A", date: self.date) },
                { _ = try await library.addAsset(toIssueNamed: "A", AssetRequest(url: URL(string: "http://h/x")!)) },
                { try await library.removeIssue(named: "A") },
            ] as [() async throws -> Void] {
                await #expect {
                    try await attempt()
                } throws: { error in
                    let error = error as? NewsstandError
                    return error?.code == .manifestUnreadable && error?.message.contains(path) == true
                }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        }
    }

    @Test func newerLibraryVersionIsRefusedAndKept() async throws {
        try await withTemporaryDirectory { root in
            let path = root.appendingPathComponent("library.json")
            let text = Data(#"{"version":4,"catalog":"elsewhere"}"#.utf8)
            try text.write(to: path)
            await #expect {
                _ = try await Library.open(at: root)
            } throws: { ($0 as? NewsstandError)?.code == .manifestFromNewerVersion }
            #expect(try Data(contentsOf: path) == text)
        }
    }

    /// Version 3 differs from version 2 only in what an older issues cannot see (saved downloads as links,
    /// asset locks as bytes of one file): opening a version-2 library rewrites its marker, nothing else, so
    /// that version 2 refuses it from then on; its legacy symlink markers are still read.
    @Test func aVersionTwoLibraryIsMarkedVersionThreeAndKeepsItsIssues() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: date)
            let layout = LibraryLayout(root: root.path)
            let path = root.appendingPathComponent("library.json")
            let current = try String(contentsOf: path, encoding: .utf8)
            try Data(current.replacingOccurrences(of: "\"version\":3", with: "\"version\":2").utf8).write(to: path)
            try FileManager.default.createSymbolicLink(
                atPath: layout.pendingMarker("00000000000000a1"), withDestinationPath: Catalog.key(for: "A"))
            let reopened = try await Library.open(at: root)
            #expect(try String(contentsOf: path, encoding: .utf8) == current)
            #expect(try await reopened.summaries().map(\.name) == ["A"])
            #expect(try Catalog(layout: layout).pendingMarkers().map(\.id) == ["00000000000000a1"])
        }
    }

    @Test func readOnlyOpenCreatesNothing() async throws {
        try await withTemporaryDirectory { root in
            let missing = root.appendingPathComponent("typo")
            await #expect {
                _ = try await Library.open(at: missing, createIfMissing: false)
            } throws: { ($0 as? NewsstandError)?.code == .libraryUnavailable }
            #expect(!FileManager.default.fileExists(atPath: missing.path))
        }
    }

    @Test func foldersAreUniqueCaseInsensitivelyAndClaimsGoWithRemoval() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let a = try await library.addIssue(named: "Weekly", date: date)
            let b = try await library.addIssue(named: "WEEKLY", date: date)
            let c = try await library.addIssue(named: "weekly/", date: date)
            #expect(Set([a, b, c].map { $0.folderName.lowercased() }).count == 3)
            try await library.removeIssue(named: "Weekly")
            // The removed issue's folder name is free again, and nothing else held it.
            let d = try await library.addIssue(named: "weekly", date: date)
            #expect(d.folderName == "weekly")
            #expect(try await library.verify().isClean)
        }
    }

    @Test func summariesAndIssuesComeFromTheIndexInOrder() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            for (name, day) in [("b", "2026-01-02"), ("a", "2026-01-02"), ("c", "2026-03-01"), ("old", "2025-12-31")] {
                try await library.addIssue(named: name, date: try #require(IssueDate(day)))
            }
            try await library.addAsset(toIssueNamed: "a", AssetRequest(url: try #require(URL(string: "http://h/x"))))
            #expect(try await library.summaries().map(\.name) == ["c", "a", "b", "old"])
            #expect(try await library.issues().first { $0.name == "a" }?.assets.count == 1)
            #expect(try await library.summaries(status: Newsstand.Issue.Status.none).count == 4)
        }
    }

    @Test func sizesNearTheLimitSumWithoutTrapping() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "Huge", date: date)
            let layout = LibraryLayout(root: root.path)
            let key = Catalog.key(for: "Huge")
            var issue = try #require(try Catalog(layout: layout).record(key: key))
            for n in 0..<3 {
                var asset = AssetDownload(id: "00000000000000a\(n)", url: try #require(URL(string: "http://h/\(n)")))
                asset.receivedBytes = Int64.max - 1
                issue.assets.append(asset)
            }
            let path = layout.bucket(key, digits: 2)
            var bucket = try CatalogBucket.load(path)
            bucket.set(issue: issue, key: key)
            try Data(bucket.encoded()).write(to: URL(fileURLWithPath: path))
            try FileManager.default.removeItem(atPath: layout.index)  // rebuilt from the record
            #expect(try await library.summaries().first?.bytes == Int64.max)
            let shown = try #require(try await library.issue(named: "Huge"))
            #expect(library.report(for: shown).bytes == Int64.max)
            #expect(try ReportJSON.text(library.report(for: shown), compact: true).contains("\"bytes\":\(Int64.max)"))
        }
    }

    @Test(arguments: ["http://127.0.0.1:99999/x", "http://127.0.0.1:0/x", "unix:///var/run/x.sock", "http+unix://x/y"])
    func urlsOutsideHttpAndRealPortsAreRefusedEverywhere(_ url: String) async throws {
        #expect(throws: NewsstandError.self) { _ = try AssetRequest.parseURL(url) }
        let record = #"{"name":"x","date":"2026-01-01","folder":"x","status":"none","assets":[{"id":"a","url":"\#(url)","state":"pending"}]}"#
        #expect(throws: NewsstandError.self) {
            _ = try Array(record.utf8).withUnsafeBufferPointer { try IssueRecord.decode($0, path: "r.json") }
        }
    }

    // MARK: Index

    @Test func aMissingIndexIsRebuiltFromTheRecords() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            for i in 0..<5 { try await library.addIssue(named: "Issue \(i)", date: date) }
            try FileManager.default.removeItem(atPath: LibraryLayout(root: root.path).index)
            #expect(try await library.summaries().count == 5)
        }
    }

    @Test func aTornLastLineIsRebuiltByTheNextWriter() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            for i in 0..<3 { try await library.addIssue(named: "Issue \(i)", date: date) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: LibraryLayout(root: root.path).index))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("{\"key\":\"00112233".utf8))  // a power cut mid-append
            try handle.close()
            #expect(try await library.summaries().count == 3, "readers skip the torn line")
            try await library.addIssue(named: "Newsstand.Issue 3", date: date)
            #expect(try await library.summaries().count == 4)
            #expect(try await library.verify().isClean)
        }
    }

    @Test func aDamagedIndexLineIsNamedAndRepairRebuildsIt() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            for i in 0..<3 { try await library.addIssue(named: "Issue \(i)", date: date) }
            let path = LibraryLayout(root: root.path).index
            var text = try String(contentsOfFile: path, encoding: .utf8)
            text = text.replacingOccurrences(of: "\"status\":\"none\"", with: "\"status\":")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            await #expect {
                _ = try await library.summaries()
            } throws: { error in
                let error = error as? NewsstandError
                return error?.code == .manifestUnreadable && error?.message.contains(path) == true
                    && error?.message.contains("verify --repair") == true
            }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "a damaged index is not rewritten")
            let report = try await library.verify(repair: true)
            #expect(report.problems.map(\.kind) == [.indexOutOfStep])
            #expect(report.isClean)
            #expect(try await library.summaries().count == 3)
        }
    }

    @Test func anInterruptedChangeIsFinishedFromItsRecord() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: date)
            // A writer killed after writing the record, before appending its index line.
            let layout = LibraryLayout(root: root.path)
            let key = Catalog.key(for: "A")
            var issue = try #require(try Catalog(layout: layout).record(key: key))
            issue.assets = [AssetDownload(id: "00000000000000aa", url: try #require(URL(string: "http://h/x")))]
            let path = layout.bucket(key, digits: 2)
            var bucket = try CatalogBucket.load(path)
            bucket.set(issue: issue, key: key)
            try Data(bucket.encoded()).write(to: URL(fileURLWithPath: path))
            try Data(key.utf8).write(to: URL(fileURLWithPath: layout.intent))
            #expect(try await library.summaries().first?.assetsTotal == 1)
            #expect(!FileManager.default.fileExists(atPath: layout.intent))
            #expect(try await library.verify().isClean)
        }
    }

    @Test func theIntentIsOneFileRenamedInAndOutAndNeverWrittenThroughALink() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let layout = LibraryLayout(root: root.path)
            try await library.addIssue(named: "A", date: date)
            // Between changes there is no intent, only its spare, and every later change reuses that file.
            #expect(!FileManager.default.fileExists(atPath: layout.intent))
            var info = stat()
            #expect(lstat(layout.intentSpare, &info) == 0)
            let inode = info.st_ino
            try await library.addIssue(named: "B", date: date)
            #expect(lstat(layout.intentSpare, &info) == 0 && info.st_ino == inode)
            // A link in the spare's place (here to a file outside) is never written through.
            let outside = root.deletingLastPathComponent().appendingPathComponent("outside-\(UUID().uuidString)").path
            try Data("keep".utf8).write(to: URL(fileURLWithPath: outside))
            defer { try? FileManager.default.removeItem(atPath: outside) }
            try FileManager.default.removeItem(atPath: layout.intentSpare)
            try FileManager.default.createSymbolicLink(atPath: layout.intentSpare, withDestinationPath: outside)
            try await library.addIssue(named: "C", date: date)
            // Nor is a second name of a file (a hard link).
            try FileManager.default.removeItem(atPath: layout.intentSpare)
            try FileManager.default.linkItem(atPath: outside, toPath: layout.intentSpare)
            try await library.addIssue(named: "D", date: date)
            #expect(try String(contentsOfFile: outside, encoding: .utf8) == "keep")
            #expect(!FileManager.default.fileExists(atPath: layout.intent))
            #expect(try await library.summaries().map(\.name).sorted() == ["A", "B", "C", "D"])
            #expect(try await library.verify().isClean)
        }
    }

    @Test func theJournalIsCompactedAndKeepsTheLatestOfEach() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root, slack: 16 << 10)
            for round in 0..<60 {
                try catalog.write { changes in
                    for i in 0..<5 {
                        var issue = Newsstand.Issue(name: "Issue \(i)", date: date, folderName: "Issue \(i)")
                        issue.assets = [
                            AssetDownload(id: "\(i)-\(round)", url: try #require(URL(string: "https://h/r/\(round)")))
                        ]
                        try changes.put(issue)
                    }
                    if round == 30 { try changes.delete(named: "Newsstand.Issue 4") }
                }
            }
            let size = try #require(POSIX.fileSize(catalog.layout.index))
            #expect(size < 40 << 10, "the journal stays near its live size (\(size) bytes)")
            let reader = try catalog.openIndex()
            let entries = try reader.liveEntries()
            #expect(entries.count == 5)
            var buffer: [UInt8] = []
            for entry in entries {
                try reader.recordBytes(entry, into: &buffer)
                let issue = try buffer.withUnsafeBufferPointer { try IssueRecord.decode($0, path: "index") }
                #expect(issue.assets.first?.id.hasSuffix("-59") == true)
            }
        }
    }

    /// Keeps the messages logged to it, for a test to read.
    struct CapturingLogHandler: LogHandler {
        final class Box: Sendable {
            let messages = Mutex<[String]>([])
        }
        let box: Box
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            box.messages.withLock { $0.append("\(event.level): \(event.message)") }
        }
    }

    /// A damaged index line used to fail the compaction that followed a committed change, so the command
    /// failed though its change was saved. The change stands and the failure is a warning.
    @Test func aCompactionThatFailsAfterACommittedChangeIsAWarning() throws {
        try withTemporaryDirectorySync { root in
            let box = CapturingLogHandler.Box()
            let logger = Logger(label: "catalog-tests") { _ in CapturingLogHandler(box: box) }
            let catalog = Catalog(layout: LibraryLayout(root: root.path), durable: false, compactionSlack: 0, logger: logger)
            try catalog.prepare(create: true)
            for i in 0..<3 {
                try catalog.write { try $0.put(Newsstand.Issue(name: "Issue \(i)", date: date, folderName: "Issue \(i)")) }
            }
            let path = catalog.layout.index
            let text = try String(contentsOfFile: path, encoding: .utf8)
            try text.replacingOccurrences(of: "\"status\":\"none\"", with: "\"status\":")
                .write(toFile: path, atomically: true, encoding: .utf8)
            for round in 0..<4 {
                try catalog.write { changes in
                    var issue = Newsstand.Issue(name: "Issue 0", date: date, folderName: "Issue 0")
                    issue.assets = [AssetDownload(id: "\(round)", url: try #require(URL(string: "https://h/\(round)")))]
                    try changes.put(issue)
                }
            }
            #expect(try catalog.issue(named: "Issue 0")?.assets.first?.id == "3")
            let warnings = box.messages.withLock { $0 }.filter { $0.hasPrefix("warning") }
            #expect(warnings.contains { $0.contains("compacting the catalog index failed") }, "\(warnings)")
        }
    }

    /// `index.jsonl` replaced by a symbolic link is never appended through: the next change rebuilds the index
    /// from the records in its place (the link goes, the file it pointed to is left as it was).
    @Test func anIndexReplacedByALinkIsNeverWrittenThrough() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root)
            try catalog.write { try $0.put(Newsstand.Issue(name: "A", date: date, folderName: "A")) }
            let outside = root.path + "/outside.jsonl"
            try FileManager.default.copyItem(atPath: catalog.layout.index, toPath: outside)
            let before = try Data(contentsOf: URL(fileURLWithPath: outside))
            try FileManager.default.removeItem(atPath: catalog.layout.index)
            try FileManager.default.createSymbolicLink(atPath: catalog.layout.index, withDestinationPath: outside)

            try catalog.write { try $0.put(Newsstand.Issue(name: "B", date: date, folderName: "B")) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == before)
            var info = stat()
            #expect(lstat(catalog.layout.index, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
            let names = try catalog.openIndex().sorted(status: nil) { $0.summary }.map(\.name)
            #expect(Set(names) == ["A", "B"])
        }
    }

    /// Two depths on disk without a split record (a synced library): opening refuses, and the repair merges
    /// them into the deeper one, a key found at both keeping the line written last.
    @Test func theRepairMergesTwoDepthsKeepingTheLatestLine() async throws {
        try await withTemporaryDirectory { root in
            let catalog = try catalog(root)
            try catalog.write { changes in
                try changes.put(Newsstand.Issue(name: "A", date: date, folderName: "A"))
                changes.claimFolder("A", forIssueNamed: "A")
            }
            let layout = catalog.layout
            let older = Date(timeIntervalSinceNow: -3600)
            for name in try FileManager.default.contentsOfDirectory(atPath: layout.records(digits: 2)) {
                try FileManager.default.setAttributes(
                    [.modificationDate: older], ofItemAtPath: layout.records(digits: 2) + "/" + name)
            }
            // Depth 3, written later: a newer A (one asset) and B, which depth 2 does not have.
            try FileManager.default.createDirectory(atPath: layout.records(digits: 3), withIntermediateDirectories: true)
            var newerA = Newsstand.Issue(name: "A", date: date, folderName: "A")
            newerA.assets = [AssetDownload(id: "00000000000000aa", url: try #require(URL(string: "https://h/a")))]
            for issue in [newerA, Newsstand.Issue(name: "B", date: date, folderName: "B")] {
                let key = Catalog.key(for: issue.name)
                var bucket = try CatalogBucket.load(layout.bucket(key, digits: 3))
                bucket.set(issue: issue, key: key)
                try Data(bucket.encoded()).write(to: URL(fileURLWithPath: bucket.path))
            }
            #expect(throws: NewsstandError.self) { try catalog.prepare(create: false) }
            #expect(try catalog.currentDigits() == 2)

            let merged = try await Library.repairBucketDepths(at: root)
            #expect(merged?.contains("1 keys found twice") == true, "\(merged ?? "nil")")
            #expect(try catalog.currentDigits() == 3)
            #expect(catalog.depthsOnDisk() == [3])
            try catalog.prepare(create: false)
            #expect(try catalog.issue(named: "A")?.assets.count == 1)
            #expect(try catalog.issue(named: "B") != nil)
            // The claim written at depth 2 came along.
            #expect(try CatalogBucket.load(layout.bucket(Catalog.folderKey("A"), digits: 3)).claim(Catalog.folderKey("A")) == Catalog.key(for: "A"))
            #expect(try await Library.repairBucketDepths(at: root) == nil)
        }
    }

    // MARK: Import and export

    @Test func importReportsEachIssueAndExportRoundTrips() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root.appendingPathComponent("one"))
            try await library.addIssue(named: "Existing", date: date)
            let input = """
                {"name":"A","date":"2026-11-20","assets":[{"url":"https://h/a.pdf","sha256":"\(String(repeating: "ab", count: 32))"}]}
                {"name":"B","date":"2026-11-21","assets":[{"url":"https://h/b.zip","unpack":false}]}
                {"name":"Existing","date":"2026-11-20"}
                {"name":"A","date":"2026-11-22"}
                {"name":"C","date":"2026-13-01"}
                {"name":"D","date":"2026-11-20","assets":[{"url":"unix:///var/run/x.sock"}]}
                {"name":"E","date":"2026-11-20","assets":[{"url":"https://h/e","sha256":"xyz"}]}
                {"date":"2026-11-20"}
                """
            let report = try await library.importIssues(from: Data(input.utf8), source: "in.jsonl")
            #expect(report.added == ["A", "B"])
            #expect(report.refused.map(\.index) == [2, 3, 4, 5, 6, 7])
            #expect(report.refused[0].reason.contains("already exists"))
            #expect(report.refused[1].reason.contains("twice"))

            let exported = root.appendingPathComponent("export.json")
            #expect(FileManager.default.createFile(atPath: exported.path, contents: nil))
            let handle = try FileHandle(forWritingTo: exported)
            try await library.exportIssues(to: handle)
            try handle.close()
            let other = try await Library.open(at: root.appendingPathComponent("two"))
            let again = try await other.importIssues(from: try Data(contentsOf: exported), source: "export.json")
            #expect(again.refused.isEmpty)
            let before = try await library.issues().map { ($0.name, $0.date, $0.assets.map { [$0.url, $0.sha256, $0.unpack] as [AnyHashable?] }) }
            let after = try await other.issues().map { ($0.name, $0.date, $0.assets.map { [$0.url, $0.sha256, $0.unpack] as [AnyHashable?] }) }
            #expect(before.map(\.0) == after.map(\.0))
            #expect(before.map(\.1) == after.map(\.1))
            #expect(before.map(\.2) == after.map(\.2))
        }
    }

    @Test func importAcceptsAnArrayAndACatalogObject() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let array = #"[{"name":"A","date":"2026-11-20"}, {"name":"B","date":"2026-11-21"}]"#
            #expect(try await library.importIssues(from: Data(array.utf8), source: "a").added == ["A", "B"])
            let object = #"{"publication":"P","issues":[{"id":"1","name":"C","date":"2026-11-22","assets":[]}]}"#
            #expect(try await library.importIssues(from: Data(object.utf8), source: "o").added == ["C"])
            await #expect {
                _ = try await library.importIssues(from: Data("[{\"name\":".utf8), source: "bad.json")
            } throws: { error in
                let error = error as? NewsstandError
                return error?.code == .invalidImport && error?.message.contains("bad.json") == true
            }
        }
    }

    // MARK: Version 1

    /// `Fixtures/v1-library` was written by the last version-1 release (`issues` at a6b242c): an issue
    /// downloaded, one failed (404), one pending with a checksum and a hostile name, one killed
    /// mid-download (in `pendingDownloads`).
    @Test func aVersionOneLibraryIsUpgraded() async throws {
        try await withTemporaryDirectory { root in
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/v1-library")
            let lib = root.appendingPathComponent("lib")
            try FileManager.default.copyItem(at: fixture, to: lib)
            let original = try Data(contentsOf: lib.appendingPathComponent("library.json"))
            // git keeps no empty folders; the release had created one per issue.
            for folder in ["Gone Weekly", "Interrupted Monthly", "Quarterly é_.._ Review"] {
                try FileManager.default.createDirectory(
                    at: lib.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            let library = try await Library.open(at: lib)
            let issues = try await library.issues()
            #expect(
                issues.map(\.name) == [
                    "The Daily 2026-11-20", "Gone Weekly", "Interrupted Monthly", "Quarterly é/..\\ Review",
                ])
            #expect(issues.map(\.status) == [.available, .failed, .downloading, .none])
            #expect(issues[0].assets.first?.fileName == "a.txt")
            #expect(issues[1].assets.first?.error?.contains("404") == true)
            #expect(issues[3].assets.first?.sha256 == String(repeating: "ab", count: 32))
            // The killed download and the failed one are both in the saved list that `resume` reads.
            let saved = try Catalog(layout: LibraryLayout(root: lib.path)).pendingMarkers().map(\.id)
            #expect(Set(saved) == ["48b740c86f37", "9df711f79461"])
            #expect(try await library.downloadingAssets().map(\.id) == ["48b740c86f37"])
            let marker = try String(contentsOf: lib.appendingPathComponent("library.json"), encoding: .utf8)
            #expect(marker.contains("\"version\":3"))
            #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent("library.json.v1").path))
            #expect(original.count > marker.utf8.count)
            #expect(try await library.verify().isClean)
            // A second open finds version 3 and changes nothing.
            _ = try await Library.open(at: lib)
            #expect(try String(contentsOf: lib.appendingPathComponent("library.json"), encoding: .utf8) == marker)
        }
    }
}
