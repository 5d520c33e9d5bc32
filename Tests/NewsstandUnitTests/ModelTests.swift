import Foundation
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

@Suite(.timeLimit(.minutes(5))) struct IssueDateTests {
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

@Suite(.timeLimit(.minutes(5))) struct IssueStatusTests {
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


/// The one HTTP-date reader, shared by `Retry-After` and the test server.
@Suite(.timeLimit(.minutes(5))) struct HTTPDateTests {
    @Test(arguments: [Int64(0), 784_111_777, 1_700_000_000, 253_402_300_799, -86_400])
    func formatAndParseRoundTrip(_ seconds: Int64) {
        #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
    }

    @Test func readsTheRFCExample() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse(" Sun, 06 Nov 1994 08:49:37 GMT ") == 784_111_777)
    }

    /// The obsolete RFC 850 and asctime forms, other zones, and malformed fields are refused.
    @Test(arguments: [
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 EST",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "",
    ])
    func refusesOtherForms(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func retryAfterReadsAFutureDate() throws {
        let inAMinute = Int64(Date().timeIntervalSince1970) + 60
        let delay = try #require(RetryAfter.parse(HTTPDate.format(inAMinute)))
        #expect(delay > .seconds(50) && delay <= .seconds(60))
    }
}
