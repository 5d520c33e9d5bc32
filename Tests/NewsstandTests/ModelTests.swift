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
        #expect(Issue.status(of: []) == .none)
        #expect(Issue.status(of: [asset(.pending)]) == .none)
        #expect(Issue.status(of: [asset(.downloading)]) == .downloading)
        #expect(Issue.status(of: [asset(.downloaded), asset(.pending)]) == .downloading)
        #expect(Issue.status(of: [asset(.downloaded), asset(.unpacked)]) == .available)
        #expect(Issue.status(of: [asset(.downloaded), asset(.failed)]) == .failed)
        // A downloaded archive that is not unpacked yet is not available.
        #expect(Issue.status(of: [asset(.downloaded, archive: true)]) == .downloading)
    }
}

