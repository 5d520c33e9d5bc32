import Foundation

/// Timestamps as RFC 3339 / ISO 8601 text in UTC (`2026-11-20T06:00:00Z`, or `…:00.123Z` with milliseconds), by
/// arithmetic on ``HTTPDate``'s calendar. Foundation's `ISO8601FormatStyle` goes through ICU: the first date it
/// formats loads ICU's calendar and time-zone tables, about 1 MiB of the binary's data and 3 MiB of its code
/// pages more in every process that logs an event or writes a subscription (a download of one 1 GiB asset
/// peaked at 35.6 MiB against 30.2 MiB before events had times, `/proc/PID/smaps` of the release binary).
package enum ISO8601Time {
    /// `date` in UTC, whole seconds (`2026-11-20T06:00:00Z`) or with milliseconds (`2026-11-20T06:00:00.123Z`),
    /// as `Date.ISO8601FormatStyle` writes them (milliseconds truncated, not rounded).
    package static func format(_ date: Date, milliseconds: Bool = false) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = floorDiv(totalMilliseconds, 1000)
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = HTTPDate.civil(fromDays: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay % 3600 / 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if milliseconds { text += "." + pad(Int(totalMilliseconds - seconds * 1000), 3) }
        return text + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds, then `Z` or a `±HH:MM` offset: what
    /// ``format(_:milliseconds:)`` and `Date.ISO8601FormatStyle` write. Nil for anything else.
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[from..<from + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ at: Int, _ expected: Character) -> Bool { at < bytes.count && bytes[at] == expected.asciiValue }
        guard let year = number(0, 4), byte(4, "-"), let month = number(5, 2), byte(7, "-"), let day = number(8, 2),
            byte(10, "T") || byte(10, "t"), let hour = number(11, 2), byte(13, ":"), let minute = number(14, 2),
            byte(16, ":"), let second = number(17, 2),
            (1...12).contains(month), (1...daysIn(month, of: year)).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var at = 19
        var fraction = 0.0
        if byte(at, ".") {
            at += 1
            var scale = 0.1
            let start = at
            while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) {
                fraction += Double(bytes[at] - UInt8(ascii: "0")) * scale
                scale /= 10
                at += 1
            }
            guard at > start else { return nil }
        }
        var offset = 0
        if byte(at, "Z") || byte(at, "z") {
            at += 1
        } else if byte(at, "+") || byte(at, "-") {
            let sign = byte(at, "-") ? -1 : 1
            guard let hours = number(at + 1, 2), byte(at + 3, ":"), let minutes = number(at + 4, 2), hours < 24,
                minutes < 60
            else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
            at += 6
        } else {
            return nil
        }
        guard at == bytes.count else { return nil }
        let days = HTTPDate.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
