import Foundation

// Parsers for response header values, kept apart from the NIO delegate that calls them so that they
// build alone (the libFuzzer targets in Fuzz/ compile this file without AsyncHTTPClient).

/// `Retry-After` (RFC 9110 §10.2.3).
enum RetryAfter {
    /// `Retry-After` as delay-seconds or an HTTP-date.
    static func parse(_ value: String) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSinceNow * 1000)))
    }
}

/// `Content-Range: bytes START-END/TOTAL` or `bytes */TOTAL` (RFC 9110 §14.4).
struct ContentRange: Hashable, Sendable {
    var start: Int64?
    var end: Int64?
    var total: Int64?

    init?(_ text: String) {
        let value = text.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard spec.count == 2 else { return nil }
        total = spec[1] == "*" ? nil : Int64(spec[1])
        if spec[0] == "*" {
            start = nil
            end = nil
        } else {
            let bounds = spec[0].split(separator: "-", maxSplits: 1)
            guard bounds.count == 2, let s = Int64(bounds[0]), let e = Int64(bounds[1]), s <= e else { return nil }
            start = s
            end = e
        }
    }
}
