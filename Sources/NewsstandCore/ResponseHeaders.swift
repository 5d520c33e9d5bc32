import Foundation

// Parsers for response header values, kept apart from the NIO delegate that calls them so that they
// build alone (the libFuzzer targets in Fuzz/ compile this file, with HTTPDate.swift, without AsyncHTTPClient).

/// `Retry-After` (RFC 9110 §10.2.3).
package enum RetryAfter {
    /// `Retry-After` as delay-seconds or an HTTP-date.
    package static func parse(_ value: String) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        guard let seconds = HTTPDate.parse(trimmed) else { return nil }
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        // Clamped so that the conversion to Int cannot trap on any date; the retry policy caps far lower anyway.
        return .milliseconds(Int(min(max(date.timeIntervalSinceNow, 0), 1e9) * 1000))
    }
}

/// `Content-Range: bytes START-END/TOTAL` or `bytes */TOTAL` (RFC 9110 §14.4).
///
/// Only a valid value is accepted: digits only, and START <= END < TOTAL (§14.4 calls any other value
/// invalid). The 206 handler appends at START and expects TOTAL bytes, so a range it cannot trust is none.
package struct ContentRange: Hashable, Sendable {
    package var start: Int64?
    package var end: Int64?
    package var total: Int64?

    package init?(_ text: String) {
        let value = text.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard spec.count == 2 else { return nil }
        if spec[1] == "*" {
            total = nil
        } else {
            guard let t = ContentRange.number(spec[1]) else { return nil }
            total = t
        }
        if spec[0] == "*" {
            guard total != nil else { return nil }  // `bytes */*` says nothing
            start = nil
            end = nil
        } else {
            let bounds = spec[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let s = ContentRange.number(bounds[0]), let e = ContentRange.number(bounds[1]),
                s <= e, total.map({ e < $0 }) ?? true
            else { return nil }
            start = s
            end = e
        }
    }

    /// `1*DIGIT` that fits an Int64; `Int64(_:)` alone would also take a sign.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}

/// How long a response says it stays fresh (RFC 9111 §4.2.1): `Cache-Control: max-age` first, else
/// `Expires` less `Date`. The scheduler never checks a feed again before then.
package enum Freshness {
    /// The freshness lifetime, or nil when the response gives none (or forbids caching: `no-store`,
    /// `no-cache`, which say nothing about how often to ask again, so they are no hint).
    package static func lifetime(cacheControl: String?, expires: String?, date: String?) -> Duration? {
        if let cacheControl {
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1)
                let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
                if name == "no-store" || name == "no-cache" { return nil }
                guard name == "max-age", parts.count == 2 else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                // Capped at a year: a larger value is a publisher's "forever", not a schedule.
                if let seconds = Int64(value), seconds >= 0 { return .seconds(min(seconds, 366 * 86_400)) }
                return nil
            }
        }
        guard let expires, let expiry = HTTPDate.parse(expires) else { return nil }
        let now = date.flatMap(HTTPDate.parse) ?? Int64(Date().timeIntervalSince1970)
        return .seconds(min(max(expiry - now, 0), 366 * 86_400))
    }
}
