import Foundation
import NewsstandTestSupport
import Testing

@testable import NewsstandCore

/// The ICU-free timestamps: the same text as Foundation's `ISO8601FormatStyle`, read back to the same instant.
@Suite(.timeLimit(.minutes(1))) struct ISO8601TimeTests {
    /// 2,000 instants from 1583 to 9999, whole seconds and milliseconds, against Foundation's own text. Each is
    /// 0.4 ms past a whole millisecond: both truncate, and an instant on the boundary itself is stored a hair
    /// below or above it depending on how the double was computed.
    @Test func formatsAsFoundationDoesAndReadsBack() {
        var random = SeededGenerator(state: 0x150_8601)
        let low = -12_212_553_600.0  // 1583-01-01
        let high = 253_402_300_799.0  // 9999-12-31T23:59:59
        for _ in 0..<2_000 {
            let milliseconds = Double(Int64.random(in: Int64(low * 1000)...Int64(high * 1000), using: &random))
            let date = Date(timeIntervalSince1970: (milliseconds + 0.4) / 1000)
            let whole = ISO8601Time.format(date)
            let precise = ISO8601Time.format(date, milliseconds: true)
            #expect(whole == date.formatted(Date.ISO8601FormatStyle()))
            #expect(precise == date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            #expect(ISO8601Time.parse(whole) == Date(timeIntervalSince1970: (milliseconds / 1000).rounded(.down)))
            #expect(abs((ISO8601Time.parse(precise)?.timeIntervalSince1970 ?? 0) - milliseconds / 1000) < 0.0005)
        }
    }

    @Test func readsOffsetsAndRefusesWhatIsNotATimestamp() {
        #expect(ISO8601Time.parse("2026-11-20T07:30:00+01:30") == ISO8601Time.parse("2026-11-20T06:00:00Z"))
        #expect(ISO8601Time.parse("2026-11-20T01:00:00-05:00") == ISO8601Time.parse("2026-11-20T06:00:00Z"))
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: 0), milliseconds: true) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: -0.5), milliseconds: true) == "1969-12-31T23:59:59.500Z")
        for text in [
            "", "2026-11-20", "2026-11-20T06:00:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
            "2026-11-20T24:00:00Z", "2026-11-20T06:00:00.Z", "2026-11-20T06:00:00Zjunk", "٢٠٢٦-11-20T06:00:00Z",
            "2026-11-20T06:00:00+0100",
        ] {
            #expect(ISO8601Time.parse(text) == nil, "\(text.debugDescription)")
        }
    }

    /// The UTC day counted by arithmetic is the one Foundation's Gregorian calendar gives, around the range's
    /// ends and at random instants.
    @Test func issueDateOfAnInstantInUTCAgreesWithTheCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        var random = SeededGenerator(state: 42)
        var instants: [Double] = [0, -1, 86_399, 86_400, -12_212_553_600, 253_402_300_799, 951_782_400]
        for _ in 0..<2_000 { instants.append(Double.random(in: -12_212_553_600...253_402_300_799, using: &random)) }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            #expect(IssueDate(date) == IssueDate(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0))
        }
    }
}
