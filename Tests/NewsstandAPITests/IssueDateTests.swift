import Foundation
import Newsstand
import Testing

@Suite(.timeLimit(.minutes(5))) struct IssueDateTests {
    @Test func fromADateInUTCByDefault() throws {
        // 2026-11-20 23:30 in New York is 2026-11-21 04:30 UTC.
        let instant = Date(timeIntervalSince1970: 1_795_235_400)
        #expect(IssueDate(instant).description == "2026-11-21")
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(IssueDate(instant, timeZone: newYork).description == "2026-11-20")
        #expect(IssueDate(Date(timeIntervalSince1970: 0)) == IssueDate("1970-01-01"))
    }

    @Test func instantsOutsideTheCalendarRangeAreClamped() {
        #expect(IssueDate(Date(timeIntervalSince1970: 1e12)).description == "9999-12-31")
        #expect(IssueDate(Date(timeIntervalSince1970: -1e12)).description == "0001-01-01")
    }
}
