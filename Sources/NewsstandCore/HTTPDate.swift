import Foundation

/// HTTP-dates in the one form RFC 9110 §5.6.7 tells senders to use, IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), as whole seconds since 1970. Shared by `Retry-After` parsing and the
/// test server (`package` access), so both read dates by the same rules. Pure arithmetic: no `DateFormatter`,
/// which corelibs-foundation makes slow and which traps on some non-ASCII input.
package enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats seconds since 1970 as an IMF-fixdate, e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
    package static func format(_ seconds: Int64) -> String {
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday (index 4).
        let weekday = Int(((days % 7) + 7 + 4) % 7)
        return "\(weekdays[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(Int(secondOfDay / 3600))):\(two(Int(secondOfDay % 3600 / 60))):\(two(Int(secondOfDay % 60))) GMT"
    }

    /// Parses an IMF-fixdate; the obsolete RFC 850 and asctime forms are not accepted, so a
    /// validator in those forms never matches (which only costs a full response).
    package static func parse(_ value: String) -> Int64? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            weekdays.contains(String(parts[0].dropLast())),
            let day = Int(parts[1]), parts[1].count == 2, (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3]), parts[3].count == 4
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    package static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    private static func two(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
