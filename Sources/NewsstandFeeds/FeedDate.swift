import Foundation
import NewsstandCore

/// The date forms feeds write, parsed by hand into UTC instants: RFC 822 as RSS feeds really write it,
/// RFC 3339, and the simple patterns a mapping names. No `DateFormatter`: corelibs-foundation's is slow,
/// locale-dependent and traps on some non-ASCII input. Every number is range-checked before use.
enum FeedDate {
    // MARK: - RFC 822 (RSS `pubDate`)

    /// An RFC 822 / RFC 2822 date and its common variants: a missing, wrong or long weekday, two-digit
    /// years (00–49 are 20xx, RFC 2822 §4.3), missing seconds or time, named zones (UT, GMT, Z, the US
    /// zones, military letters as UTC), `+hhmm` or `+hh:mm`, extra spaces, a missing comma, the month
    /// before the day (asctime order), full month names. An RFC 3339 date is accepted too, as some
    /// feeds put one in `pubDate`. A missing zone is UTC.
    static func rfc822(_ text: String) -> Date? {
        let utf8 = Array(text.utf8.prefix(128))
        if let date = rfc3339(utf8) { return date }
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int?
        for (k, byte) in utf8.enumerated() {
            let separator = byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: ",")
            if separator {
                if let s = start { tokens.append(utf8[s..<k]) }
                start = nil
            } else if start == nil {
                start = k
            }
        }
        if let s = start { tokens.append(utf8[s..<utf8.count]) }

        var numbers: [ArraySlice<UInt8>] = []
        var month: Int?
        var clock: (hour: Int, minute: Int, second: Int)?
        var offset = 0
        var sawZone = false
        var meridiem: Int?  // 0 for AM, 12 for PM: a 12-hour clock
        for var token in tokens {
            guard let first = token.first else { continue }
            if token.contains(UInt8(ascii: ":")), clock == nil, isDigit(first) {
                // "10:00PM": the meridiem stuck to the clock.
                if token.count > 2, let half = meridiemOffset(token.suffix(2)) {
                    meridiem = half
                    token = token.dropLast(2)
                }
                guard let parsed = parseClock(token) else { return nil }
                clock = parsed.clock
                if let zone = parsed.zone {
                    offset = zone
                    sawZone = true
                }
            } else if clock != nil, meridiem == nil, let half = meridiemOffset(token) {
                meridiem = half
            } else if isDigit(first) {
                guard token.allSatisfy(isDigit), token.count <= 4 else { return nil }
                numbers.append(token)
            } else if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                guard !sawZone, let zone = numericZone(token) else { return nil }
                offset = zone
                sawZone = true
            } else if let m = monthNumber(token), month == nil {
                month = m
            } else if weekdayNames.contains(where: { startsWithIgnoringCase(token, $0) }) {
                continue  // a weekday, right or wrong, says nothing the date does not
            } else if !sawZone, let zone = namedZone(token) {
                offset = zone
                sawZone = true
            } else if token.first == UInt8(ascii: "("), sawZone {
                continue  // a comment after the zone: "+0000 (UTC)"
            } else {
                return nil
            }
        }
        guard let month, numbers.count == 2 else { return nil }
        // The four-digit number is the year; two two-digit ones are day then year.
        var dayToken = numbers[0]
        var yearToken = numbers[1]
        if dayToken.count > 2 { swap(&dayToken, &yearToken) }
        guard dayToken.count <= 2, let day = number(dayToken), var year = number(yearToken) else { return nil }
        if yearToken.count <= 2 {
            year += year < 50 ? 2000 : 1900
        } else if yearToken.count == 3 {
            year += 1900  // RFC 2822 §4.3: a three-digit year is added to 1900
        }
        var time = clock ?? (0, 0, 0)
        if let meridiem {
            guard (1...12).contains(time.hour) else { return nil }
            time.hour = time.hour % 12 + meridiem
        }
        return make(
            year: year, month: month, day: day, hour: time.hour, minute: time.minute, second: time.second,
            fraction: 0, offsetSeconds: offset)
    }

    // MARK: - RFC 3339 (Atom, JSON Feed)

    /// `YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM|±HHMM)`; `t` or a space for `T`; a missing zone is
    /// UTC; a date alone is midnight UTC.
    static func rfc3339(_ text: String) -> Date? {
        rfc3339(Array(text.utf8.prefix(128)))
    }

    private static func rfc3339(_ utf8: [UInt8]) -> Date? {
        var bytes = utf8[...]
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { bytes.removeLast() }
        while let first = bytes.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D {
            bytes.removeFirst()
        }
        let b = Array(bytes)
        // W3DTF's reduced precisions: a year, or a year and month, is the first day of it (as feedparser reads).
        if b.count == 4, let year = number(b[0..<4]) {
            return make(year: year, month: 1, day: 1, hour: 0, minute: 0, second: 0, fraction: 0, offsetSeconds: 0)
        }
        if b.count == 7, b[4] == UInt8(ascii: "-"), let year = number(b[0..<4]), let month = number(b[5..<7]) {
            return make(year: year, month: month, day: 1, hour: 0, minute: 0, second: 0, fraction: 0, offsetSeconds: 0)
        }
        guard b.count >= 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            let year = number(b[0..<4]), let month = number(b[5..<7]), let day = number(b[8..<10])
        else { return nil }
        if b.count == 10 {
            return make(
                year: year, month: month, day: day, hour: 0, minute: 0, second: 0, fraction: 0, offsetSeconds: 0)
        }
        let separator = b[10]
        guard separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == 0x20,
            let parsed = parseClock(b[11...])
        else { return nil }
        return make(
            year: year, month: month, day: day, hour: parsed.clock.hour, minute: parsed.clock.minute,
            second: parsed.clock.second, fraction: parsed.fraction, offsetSeconds: parsed.zone ?? 0)
    }

    // MARK: - Building blocks

    /// `HH:MM[:SS[.fraction]]` optionally followed by `Z` or a numeric offset.
    private static func parseClock(_ token: ArraySlice<UInt8>) -> (
        clock: (hour: Int, minute: Int, second: Int), fraction: Double, zone: Int?
    )? {
        var k = token.startIndex
        func digits(_ count: Int) -> Int? {
            guard k + count <= token.endIndex, let value = number(token[k..<(k + count)]) else { return nil }
            k += count
            return value
        }
        // The hour may be one digit in sloppy feeds ("9:05").
        var hour: Int?
        if k + 1 < token.endIndex, token[k + 1] == UInt8(ascii: ":") {
            hour = digits(1)
        } else {
            hour = digits(2)
        }
        guard let hour, k < token.endIndex, token[k] == UInt8(ascii: ":") else { return nil }
        k += 1
        guard let minute = digits(2) else { return nil }
        var second = 0
        if k < token.endIndex, token[k] == UInt8(ascii: ":") {
            k += 1
            guard let s = digits(2) else { return nil }
            second = s
        }
        var fraction = 0.0
        if k < token.endIndex, token[k] == UInt8(ascii: ".") || token[k] == UInt8(ascii: ",") {
            k += 1
            var scale = 0.1
            let start = k
            while k < token.endIndex, isDigit(token[k]) {
                // Beyond nanoseconds the digits change nothing a Double can hold.
                if k - start < 9 { fraction += Double(token[k] - UInt8(ascii: "0")) * scale }
                scale /= 10
                k += 1
            }
            guard k > start else { return nil }
        }
        guard hour < 24 || (hour == 24 && minute == 0 && second == 0), minute < 60, second <= 60 else { return nil }
        var zone: Int?
        // A space before the zone ("13:31:04.96 +0700"), as some generators write.
        while k < token.endIndex, token[k] == 0x20 { k += 1 }
        if k < token.endIndex {
            let rest = token[k...]
            if rest.count == 1, rest.first.map({ $0 | 0x20 }) == UInt8(ascii: "z") {
                zone = 0
            } else if let numeric = numericZone(rest) {
                zone = numeric
            } else {
                return nil
            }
        }
        // A leap second is read as the last second of its minute.
        return ((hour, minute, min(second, 59)), fraction, zone)
    }

    /// `+hhmm`, `-hhmm`, `+hh:mm`, `+hh` as seconds east of UTC.
    private static func numericZone(_ token: ArraySlice<UInt8>) -> Int? {
        guard let sign = token.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let digits = Array(token.dropFirst().filter { $0 != UInt8(ascii: ":") })
        guard digits.count == 4 || digits.count == 2, token.count - 1 - digits.count <= 1,
            let hours = number(digits[0..<2]), let minutes = digits.count == 4 ? number(digits[2..<4]) : 0,
            hours < 24, minutes < 60
        else { return nil }
        let seconds = hours * 3600 + minutes * 60
        return sign == UInt8(ascii: "-") ? -seconds : seconds
    }

    /// `AM` → 0, `PM` → 12 (also `a.m.`, `p.m.`); nil for anything else.
    private static func meridiemOffset(_ token: ArraySlice<UInt8>) -> Int? {
        let letters = token.filter { $0 != UInt8(ascii: ".") }.map { $0 | 0x20 }
        guard letters.count == 2, letters[1] == UInt8(ascii: "m") else { return nil }
        switch letters[0] {
        case UInt8(ascii: "a"): return 0
        case UInt8(ascii: "p"): return 12
        default: return nil
        }
    }

    /// A zone by name: RFC 822's, the military letters, the European and other abbreviations real feeds
    /// write (`CET`, `CEST`, `MET`, `BST`…, as in the tz database), `Etc/GMT`, and `GMT`/`UTC` followed by
    /// a numeric offset (`GMT-0400`, `UTC+01:00`). An ambiguous abbreviation (`IST`) is not guessed.
    private static func namedZone(_ token: ArraySlice<UInt8>) -> Int? {
        var bytes = token
        // `Etc/GMT+5` is POSIX's inverted sign (5 hours west); `GMT+5` in a feed means east, as written.
        let posix = bytes.count > 4 && startsWith(bytes, "etc/")
        if posix { bytes = bytes.dropFirst(4) }
        for prefix in ["gmt", "utc", "ut"] where bytes.count > prefix.utf8.count && startsWith(bytes, prefix) {
            let rest = bytes.dropFirst(prefix.utf8.count)
            // Not an offset after it ("UTC" read as "UT" + "C", "GMT0"): the name itself is read below.
            guard let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { break }
            var seconds: Int
            if let zone = numericZone(rest) {
                seconds = zone
            } else {
                guard rest.count <= 3, let hours = number(rest.dropFirst()), hours <= 14 else { return nil }
                seconds = hours * 3600 * (sign == UInt8(ascii: "-") ? -1 : 1)
            }
            return posix ? -seconds : seconds
        }
        let name = String(decoding: bytes, as: UTF8.self).uppercased()
        switch name {
        case "UT", "UTC", "GMT", "Z", "WET", "GMT0", "UCT", "ZULU": return 0
        case "CET", "MET", "WEST", "BST": return 3600
        case "CEST", "MEST", "EET", "MESZ": return 2 * 3600
        case "MEZ": return 3600
        case "EEST", "MSK": return 3 * 3600
        case "JST", "KST": return 9 * 3600
        case "AEST": return 10 * 3600
        case "AEDT": return 11 * 3600
        case "NZST": return 12 * 3600
        case "NZDT": return 13 * 3600
        // North America's zones without S/D, as some generators write them: standard time, as feedparser reads.
        case "AT": return -4 * 3600
        case "ET": return -5 * 3600
        case "CT": return -6 * 3600
        case "MT": return -7 * 3600
        case "PT": return -8 * 3600
        case "AST": return -4 * 3600
        case "ADT": return -3 * 3600
        case "HST": return -10 * 3600
        case "AKST": return -9 * 3600
        case "AKDT": return -8 * 3600
        case "EST": return -5 * 3600
        case "EDT": return -4 * 3600
        case "CST": return -6 * 3600
        case "CDT": return -5 * 3600
        case "MST": return -7 * 3600
        case "MDT": return -6 * 3600
        case "PST": return -8 * 3600
        case "PDT": return -7 * 3600
        default:
            // RFC 2822 §4.3: military zones were defined with the wrong sign, so they mean -0000 (unknown).
            if name.utf8.count == 1, let letter = name.utf8.first, letter >= UInt8(ascii: "A"),
                letter <= UInt8(ascii: "Z"), letter != UInt8(ascii: "J")
            {
                return 0
            }
            return nil
        }
    }

    private static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    private static let fullMonthNames = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december",
    ]
    private static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// `Mar`, `March`, `MAR`, `Sept`: three letters naming a month, the rest a prefix of its full name.
    private static func monthNumber(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3, token.count <= 9 else { return nil }
        let lower = String(decoding: token, as: UTF8.self).lowercased().trimmingCharacters(in: ["."])
        for (index, full) in fullMonthNames.enumerated() where full.hasPrefix(lower) && lower.count >= 3 {
            return index + 1
        }
        if let index = monthNames.firstIndex(of: String(lower.prefix(3))), lower.count == 3 { return index + 1 }
        return nil
    }

    /// Whether `bytes` start with the lowercase ASCII `prefix`, ignoring case.
    private static func startsWith(_ bytes: ArraySlice<UInt8>, _ prefix: String) -> Bool {
        bytes.count >= prefix.utf8.count && zip(bytes, prefix.utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    private static func startsWithIgnoringCase(_ token: ArraySlice<UInt8>, _ prefix: String) -> Bool {
        guard token.count >= prefix.utf8.count, token.count <= 9 else { return false }
        return zip(token, prefix.utf8).allSatisfy { $0 | 0x20 == $1 }
            && token.allSatisfy { ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") || $0 == 0x2E }
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// A run of at most 9 ASCII digits as a number (so it cannot overflow).
    static func number<C: Collection>(_ digits: C) -> Int? where C.Element == UInt8 {
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        var value = 0
        for byte in digits {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The instant of a civil date and time at `offsetSeconds` east of UTC; nil when the date is not a
    /// real one or the year is outside 1–9999.
    static func make(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double, offsetSeconds: Int
    ) -> Date? {
        guard IssueDate(year: year, month: month, day: day) != nil else { return nil }
        let days = HTTPDate.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// The UTC calendar day of `date`, `YYYY-MM-DD` (a mapping's `{$date}`).
    static func day(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, abs(seconds) < 1e14 else { return nil }
        let whole = Int64(seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let (year, month, day) = HTTPDate.civil(fromDays: days)
        return IssueDate(year: year, month: month, day: day)?.description
    }
}
