import Foundation
import Testing

@testable import Newsstand

@Suite struct IssueDateTests {
    @Test(arguments: ["2026-11-20", "2024-02-29", "0001-01-01", "9999-12-31"])
    func validDates(_ text: String) throws {
        let date = try #require(IssueDate(text))
        #expect(date.description == text)
    }

    @Test(arguments: [
        "2026-02-29", "2026-13-01", "2026-00-10", "2026-1-1", "20261120", "2026/11/20", "", "abcd-ef-gh", "2026-11-31",
        " 2026-11-20",
    ])
    func invalidDates(_ text: String) {
        #expect(IssueDate(text) == nil)
    }

    @Test func ordering() throws {
        let a = try #require(IssueDate("2026-11-20"))
        let b = try #require(IssueDate("2026-12-01"))
        #expect(a < b)
    }
}

@Suite struct IssueStatusTests {
    func asset(_ state: AssetDownload.State, archive: Bool? = nil, id: String = UUID().uuidString) -> AssetDownload {
        var asset = AssetDownload(id: id, url: URL(fileURLWithPath: "/x"))
        asset.state = state
        asset.isArchive = archive
        return asset
    }

    @Test func statusFollowsAssets() {
        #expect(Issue.status(of: [], inFlight: []) == .none)
        #expect(Issue.status(of: [asset(.pending)], inFlight: []) == .none)
        #expect(Issue.status(of: [asset(.downloading)], inFlight: []) == .downloading)
        #expect(Issue.status(of: [asset(.pending, id: "a")], inFlight: ["a"]) == .downloading)
        #expect(Issue.status(of: [asset(.downloaded), asset(.pending)], inFlight: []) == .downloading)
        #expect(Issue.status(of: [asset(.downloaded), asset(.unpacked)], inFlight: []) == .available)
        #expect(Issue.status(of: [asset(.downloaded), asset(.failed)], inFlight: []) == .failed)
        // A downloaded archive that is not unpacked yet is not available.
        #expect(Issue.status(of: [asset(.downloaded, archive: true)], inFlight: []) == .downloading)
    }
}

@Suite struct ManifestTests {
    func sample() throws -> Manifest {
        var manifest = Manifest()
        var issue = Issue(
            name: "The Daily 2026-11-20", date: try #require(IssueDate("2026-11-20")),
            folderName: "The Daily 2026-11-20")
        var asset = AssetDownload(
            id: "0123456789ab", url: try #require(URL(string: "https://example.com/a.zip")),
            sha256: String(repeating: "a", count: 64))
        asset.state = .downloaded
        asset.receivedBytes = 42
        asset.expectedBytes = 42
        asset.userInfo = ["k": "v"]
        issue.assets = [asset]
        issue.updateStatus(inFlight: [])
        manifest.issues = [issue]
        manifest.pendingDownloads = ["0123456789ab"]
        return manifest
    }

    @Test func roundTrip() throws {
        let manifest = try sample()
        let decoded = try Manifest.decode(try manifest.encoded(), path: "library.json")
        #expect(decoded == manifest)
        let text = String(decoding: try manifest.encoded(), as: UTF8.self)
        #expect(text.contains("\"version\":1"))
    }

    @Test(arguments: [
        "", "{", "null", "[]", "{\"issues\":[]}", "{\"version\":0,\"issues\":[],\"pendingDownloads\":[]}",
        "{\"version\":1,\"issues\":[{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"x\",\"status\":\"none\",\"assets\":[{\"id\":\"a\",\"url\":\"http://h/x\",\"state\":\"pending\",\"userInfo\":[1]}]}],\"pendingDownloads\":[]}",
        "{\"version\":\"1\",\"issues\":[]}", "{\"version\":1}",
        "{\"version\":1,\"issues\":[{\"name\":\"x\",\"date\":\"2026-02-30\",\"folder\":\"x\",\"status\":\"none\"}],\"pendingDownloads\":[]}",
        "{\"version\":1,\"issues\":[{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"../x\",\"status\":\"none\"}],\"pendingDownloads\":[]}",
        "{\"version\":1,\"issues\":[{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"x\",\"status\":\"none\"},{\"name\":\"x\",\"date\":\"2026-01-01\",\"folder\":\"y\",\"status\":\"none\"}],\"pendingDownloads\":[]}",
    ])
    func unreadableManifestsAreRefused(_ text: String) {
        #expect {
            _ = try Manifest.decode(Data(text.utf8), path: "/lib/library.json")
        } throws: { error in
            let error = error as? NewsstandError
            return error?.code == .manifestUnreadable && error?.message.contains("/lib/library.json") == true
        }
    }

    @Test func newerVersionIsRefused() {
        #expect {
            _ = try Manifest.decode(
                Data("{\"version\":2,\"issues\":[],\"pendingDownloads\":[],\"future\":true}".utf8),
                path: "/lib/library.json")
        } throws: { error in
            (error as? NewsstandError)?.code == .manifestFromNewerVersion
        }
    }
}

@Suite struct JSONRoundTripTests {
    @Test(arguments: [
        "plain", "quote \" and backslash \\", "tab\tnew\nline\r", "nul \u{0} bell \u{7}", "東京 🗞️ é", "\u{2028}\u{FEFF}",
        "",
    ])
    func stringsSurviveTheManifest(_ text: String) throws {
        var manifest = Manifest()
        var issue = Issue(
            name: text.isEmpty ? "empty" : text, date: try #require(IssueDate("2026-11-20")), folderName: "f")
        var asset = AssetDownload(id: "0123456789ab", url: try #require(URL(string: "http://127.0.0.1/x")))
        asset.error = text
        asset.userInfo = [text: text]
        issue.assets = [asset]
        manifest.issues = [issue]
        let decoded = try Manifest.decode(try manifest.encoded(), path: "library.json")
        #expect(decoded == manifest)
    }

    @Test func readsEscapesAndSurrogatePairs() throws {
        let text =
            #"{"version":1,"issues":[{"name":"\u00e9\ud83d\uddde\/\"","date":"2026-11-20","folder":"f","status":"none","assets":[]}],"pendingDownloads":[]}"#
        let manifest = try Manifest.decode(Data(text.utf8), path: "library.json")
        #expect(manifest.issues.first?.name == "é🗞/\"")
    }
}
