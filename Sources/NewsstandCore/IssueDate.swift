import Foundation

/// A calendar date without a time or time zone, written `YYYY-MM-DD` (an issue's cover date).
public struct IssueDate: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Parses a strict `YYYY-MM-DD` string naming a real calendar date.
    /// - Parameter string: The text, e.g. `2026-11-20`.
    /// - Returns: `nil` when the text is malformed or names no real date (`2026-02-30`).
    public init?(_ string: String) {
        let utf8 = Array(string.utf8)
        guard utf8.count == 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in utf8[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Creates a date from its parts.
    /// - Returns: `nil` when the parts name no real date.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month) else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The calendar day (Gregorian) on which `date` falls in `timeZone`: UTC unless told otherwise, so
    /// that the same instant gives the same issue date on every machine (a feed item published at
    /// 23:30 in New York is dated the next day in UTC; pass `.current` or the publisher's zone for
    /// the local day). An instant before year 1 or after year 9999 gives 0001-01-01 or 9999-12-31.
    /// - Parameters:
    ///   - date: The instant.
    ///   - timeZone: Where the day is counted; UTC by default.
    public init(_ date: Date, timeZone: TimeZone = .gmt) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.era, .year, .month, .day], from: date)
        if parts.era == 0 {  // before year 1 (BC)
            self.init(uncheckedYear: 1, month: 1, day: 1)
        } else if let year = parts.year, let month = parts.month, let day = parts.day,
            let valid = IssueDate(year: year, month: month, day: day)
        {
            self = valid
        } else {  // after year 9999
            self.init(uncheckedYear: 9999, month: 12, day: 31)
        }
    }

    /// Today's date in the local time zone.
    public static func today() -> IssueDate {
        let parts = Calendar.current.dateComponents([.year, .month, .day], from: Date())
        return IssueDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
            ?? IssueDate(uncheckedYear: 1970, month: 1, day: 1)
    }

    /// For a date already checked, such as one a compact listing packed after parsing it.
    package init(uncheckedYear year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: IssueDate, rhs: IssueDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = IssueDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a YYYY-MM-DD date: \(text)")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
