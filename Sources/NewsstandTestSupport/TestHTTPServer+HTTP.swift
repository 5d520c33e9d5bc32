/// The HTTP semantics the test server implements (RFC 9110), kept free of I/O so each rule
/// reads on its own.
enum HTTPSemantics {
    /// What to send for a request that may carry `Range`.
    enum RangeDecision: Equatable {
        /// 200 with the whole representation.
        case full
        /// 206 with bytes `first...last` (inclusive, as in `Content-Range`).
        case partial(first: Int64, last: Int64)
        /// 416 with `Content-Range: bytes */SIZE`.
        case unsatisfiable
    }

    /// A single parsed byte-range-spec.
    enum RangeSpec: Equatable {
        case from(Int64)
        case fromTo(Int64, Int64)
        case suffix(Int64)
    }

    /// Evaluates `Range` and `If-Range` (RFC 9110 §13.1.5, §14.2).
    ///
    /// - Parameters:
    ///   - etag: the ETag the response carries (nil when validators are omitted), quotes included.
    ///   - lastModified: the `Last-Modified` the response carries, in seconds since 1970.
    static func rangeDecision(
        range: String?,
        ifRange: String?,
        size: Int64,
        etag: String?,
        lastModified: Int64?
    ) -> RangeDecision {
        // A Range we cannot (or choose not to) parse is ignored, which RFC 9110 allows.
        guard let range, let spec = parseRange(range) else { return .full }
        if let ifRange, !ifRangeHolds(ifRange, etag: etag, lastModified: lastModified) {
            return .full
        }
        return resolve(spec, size: size)
    }

    /// Parses `bytes=N-`, `bytes=N-M` or `bytes=-K`; nil for anything else, including several
    /// ranges, which the server then answers with the full body.
    static func parseRange(_ value: String) -> RangeSpec? {
        let trimmed = trim(value)
        guard let equals = trimmed.firstIndex(of: "=") else { return nil }
        guard trim(trimmed[..<equals]).lowercased() == "bytes" else { return nil }
        let set = trim(trimmed[trimmed.index(after: equals)...])
        guard !set.contains(","), let dash = set.firstIndex(of: "-") else { return nil }
        let first = trim(set[..<dash])
        let last = trim(set[set.index(after: dash)...])
        if first.isEmpty {
            guard let suffix = digits(last) else { return nil }
            return .suffix(suffix)
        }
        guard let start = digits(first) else { return nil }
        if last.isEmpty { return .from(start) }
        // last < first makes the whole field invalid (RFC 9110 §14.1.1), so it is ignored.
        guard let end = digits(last), end >= start else { return nil }
        return .fromTo(start, end)
    }

    /// Applies a parsed range to a representation of `size` bytes.
    static func resolve(_ spec: RangeSpec, size: Int64) -> RangeDecision {
        switch spec {
        case .from(let first):
            return first >= size ? .unsatisfiable : .partial(first: first, last: size - 1)
        case .fromTo(let first, let last):
            return first >= size ? .unsatisfiable : .partial(first: first, last: min(last, size - 1))
        case .suffix(let length):
            if length == 0 { return .unsatisfiable }
            // A non-zero suffix of an empty representation is satisfiable but has no bytes that
            // a Content-Range could name, so the whole (empty) body is sent instead.
            if size == 0 { return .full }
            return .partial(first: max(0, size - length), last: size - 1)
        }
    }

    /// True when `If-Range` lets the Range apply: a strong ETag equal to the current strong ETag,
    /// or an HTTP-date equal to `Last-Modified`. A weak ETag on either side never matches.
    static func ifRangeHolds(_ value: String, etag: String?, lastModified: Int64?) -> Bool {
        let validator = trim(value)
        if validator.hasPrefix("\"") || validator.hasPrefix("W/") {
            guard let etag, !isWeak(validator), !isWeak(etag) else { return false }
            return validator == etag
        }
        guard let lastModified, let date = parseHTTPDate(validator) else { return false }
        return date == lastModified
    }

    /// True when `If-None-Match` matches the current ETag by weak comparison (so 304 is due).
    static func noneMatchMatches(_ value: String, etag: String?) -> Bool {
        guard let etag else { return false }
        let current = opaque(etag)
        for candidate in value.split(separator: ",") {
            let tag = trim(candidate)
            if tag == "*" || opaque(tag) == current { return true }
        }
        return false
    }

    static func isWeak(_ etag: String) -> Bool {
        etag.hasPrefix("W/")
    }

    /// The quoted opaque tag without any `W/` prefix, for weak comparison.
    static func opaque(_ etag: String) -> String {
        isWeak(etag) ? String(etag.dropFirst(2)) : etag
    }

    /// A strong ETag derived from content: FNV-1a 64, which is plenty to tell test bodies apart.
    static func contentETag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return "\"\(hex(hash, width: 16))\""
    }

    /// A strong ETag for a file, from its size and modification time (the nginx approach).
    static func fileETag(size: Int64, mtimeSeconds: Int64, mtimeNanoseconds: Int64) -> String {
        "\"\(hex(UInt64(bitPattern: size), width: 1))-\(hex(UInt64(bitPattern: mtimeSeconds), width: 1))\(hex(UInt64(bitPattern: mtimeNanoseconds), width: 8))\""
    }

    static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // MARK: - HTTP-date (IMF-fixdate, RFC 9110 §5.6.7)

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats seconds since 1970 as an IMF-fixdate, e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
    static func formatHTTPDate(_ seconds: Int64) -> String {
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
    static func parseHTTPDate(_ value: String) -> Int64? {
        let parts = trim(value).split(separator: " ")
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
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
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

    // MARK: - Small parsing helpers

    /// Decimal digits only (no sign); values past Int64 saturate, which keeps huge last-byte
    /// positions valid (they are clipped to the size anyway).
    static func digits(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text) ?? .max
    }

    static func trim(_ text: some StringProtocol) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
