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

    func catalog(_ root: URL) throws -> Catalog {
        let catalog = Catalog(layout: LibraryLayout(root: root.path), durable: false)
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
        #expect(CatalogIndexKey.isKey(Catalog.key(for: "x")))
        let key = Catalog.key(for: "The Daily 2026-11-20")
        for bad in ["", "0", String(repeating: "0", count: 33), String(repeating: "A", count: 32), "g" + key.dropFirst()] {
            #expect(!CatalogIndexKey.isKey(bad), "\(bad)")
        }
    }

    // MARK: Through the library

    @Test func aDamagedRecordIsNamedAndNeverOverwritten() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: date)
            let key = Catalog.key(for: "A")
            let path = LibraryLayout(root: root.path).database
            let garbage = #"{"name": "A", "date"}"#
            try SQLiteShell.run(path, "UPDATE issues SET record = '\(garbage)' WHERE key = '\(key)'")
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
            #expect(try SQLiteShell.run(path, "SELECT record FROM issues WHERE key = '\(key)'") == garbage + "\n")
        }
    }

    @Test func newerLibraryVersionIsRefusedAndKept() async throws {
        try await withTemporaryDirectory { root in
            let path = root.appendingPathComponent("library.json")
            let text = Data(#"{"version":5,"catalog":"elsewhere"}"#.utf8)
            try text.write(to: path)
            await #expect {
                _ = try await Library.open(at: root)
            } throws: { ($0 as? NewsstandError)?.code == .manifestFromNewerVersion }
            #expect(try Data(contentsOf: path) == text)
        }
    }

    /// A version-3 library (records in JSON-lines buckets, saved downloads as links and symlinks, the event log
    /// in a file) is upgraded into the database when first opened: every issue, saved download and event (with
    /// its cursor, so hooks carry on) is there, the old files are gone, and `library.json` says version 4.
    @Test(arguments: [2, 3])
    func anOlderLibraryIsUpgradedIntoTheDatabase(version: Int) async throws {
        try await withTemporaryDirectory { root in
            let layout = LibraryLayout(root: root.path)
            let issue = try sampleIssue()
            let key = Catalog.key(for: issue.name)
            try FileManager.default.createDirectory(atPath: layout.records(digits: 2), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: layout.pending, withIntermediateDirectories: true)
            var line = JSONWriter()
            issue.write(to: &line)
            let bucket = "{\"key\":\"\(key)\",\"issue\":" + String(decoding: line.bytes, as: UTF8.self) + "}\n"
                + "{\"key\":\"\(Catalog.folderKey(issue.claimName))\",\"claim\":\"\(key)\"}\n"
            try Data(bucket.utf8).write(to: URL(fileURLWithPath: "\(layout.records(digits: 2))/\(key.prefix(2)).jsonl"))
            try FileManager.default.createSymbolicLink(
                atPath: "\(layout.pending)/00000000000000a1", withDestinationPath: key)
            let events = (41...42).map { cursor in
                #"{"cursor":\#(cursor),"id":"e\#(cursor)","kind":"issue.added","time":"2026-11-20T06:00:00.000Z"}"#
            }.joined(separator: "\n") + "\n"
            try Data(events.utf8).write(to: URL(fileURLWithPath: layout.legacyEvents))
            try Data(#"{"version":\#(version),"bucketDigits":2}"#.utf8).write(to: URL(fileURLWithPath: layout.manifest))

            let library = try await Library.open(at: root)
            #expect(try await library.issues() == [issue])
            #expect(try Catalog(layout: layout).pendingMarkers().map(\.id) == ["00000000000000a1"])
            #expect(try library.catalog.readEvents(after: 0).map(\.cursor) == [41, 42])
            #expect(try library.catalog.lastEventCursor() == 42)
            for old in [layout.records(digits: 2), layout.pending, layout.legacyEvents] {
                #expect(!FileManager.default.fileExists(atPath: old), "\(old)")
            }
            #expect(try String(contentsOf: URL(fileURLWithPath: layout.manifest), encoding: .utf8).contains("\"version\":4"))
            // The next event carries the cursor on.
            try await library.addIssue(named: "B", date: date)
            #expect(try library.catalog.readEvents(after: 42).map(\.cursor) == [43])
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
            try Catalog(layout: layout).write { try $0.put(issue) }
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

    // MARK: The database

    /// Each record is JSON that the `sqlite3` shell and `json_extract` read, as the issue says.
    @Test func theRecordIsJSONThatTheShellReads() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "Ünïcode \"quoted\"", date: date)
            let path = LibraryLayout(root: root.path).database
            #expect(try SQLiteShell.run(path, "SELECT json_extract(record, '$.name'), day FROM issues") == "Ünïcode \"quoted\"|20261120\n")
        }
    }

    /// A record edited by hand (its date changed through `json_set`): `verify` finds that the columns `list`
    /// reads say otherwise, and `--repair` writes them again from the record.
    @Test func aRecordEditedByHandGetsItsColumnsBackFromVerify() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            try await library.addIssue(named: "A", date: date)
            try await library.addIssue(named: "B", date: date)
            let path = LibraryLayout(root: root.path).database
            try SQLiteShell.run(path, "UPDATE issues SET record = json_set(record, '$.date', '2027-01-01') WHERE name = 'A'")
            #expect(try await library.summaries().map(\.name) == ["A", "B"])  // by name on one day
            let report = try await library.verify()
            #expect(report.problems.map(\.kind) == [.indexOutOfStep])
            #expect(try await library.verify(repair: true).problems.map(\.repaired) == [true])
            #expect(try await library.summaries().map(\.date.description) == ["2027-01-01", "2026-11-20"])
            #expect(try await library.verify().isClean)
        }
    }

    /// A database file that is not one (overwritten, truncated by a bad copy): an open, a read or `verify` stops
    /// with an error or a problem naming it, and nothing writes over it (`verify --repair` neither).
    @Test(arguments: ["garbage", "truncated"])
    func aDamagedDatabaseIsRefusedNamingItAndLeftUntouched(_ damage: String) async throws {
        try await withTemporaryDirectory { root in
            try await Library.withLibrary(at: root) { library in
                for n in 0..<50 { try await library.addIssue(named: "Issue \(n)", date: date) }
            }
            let path = LibraryLayout(root: root.path).database
            // Checkpointed into the main file first, so that the damage is all there is.
            try SQLiteShell.run(path, "PRAGMA wal_checkpoint(TRUNCATE)")
            let whole = try Data(contentsOf: URL(fileURLWithPath: path))
            let damaged =
                damage == "garbage" ? Data(repeating: 0x41, count: whole.count) : whole.prefix(whole.count / 2)
            try damaged.write(to: URL(fileURLWithPath: path))
            for repair in [false, true] {
                do {
                    let library = try await Library.open(at: root)
                    _ = try await library.summaries()
                    // The pages a listing reads may all be in the half that is left: `verify` reads them all.
                    let report = try await library.verify(repair: repair)
                    #expect(report.problems.contains { $0.path == path && $0.kind == .indexOutOfStep && !$0.repaired })
                } catch let error as NewsstandError {
                    #expect(error.code == .manifestUnreadable && error.message.contains(path), "\(error.message)")
                }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
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
            #expect(marker.contains("\"version\":4"))
            #expect(!FileManager.default.fileExists(atPath: lib.appendingPathComponent("library.json.v1").path))
            #expect(original.count > marker.utf8.count)
            #expect(try await library.verify().isClean)
            // A second open finds version 4 and changes nothing.
            _ = try await Library.open(at: lib)
            #expect(try String(contentsOf: lib.appendingPathComponent("library.json"), encoding: .utf8) == marker)
        }
    }
}
