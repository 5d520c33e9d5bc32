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
