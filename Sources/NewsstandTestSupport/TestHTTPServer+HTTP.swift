internal import NewsstandCore  // HTTPDate

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
        guard let lastModified, let date = HTTPDate.parse(validator) else { return false }
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
