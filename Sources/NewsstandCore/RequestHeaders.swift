import Foundation

/// The rules for an asset's own request headers (an `Authorization` or a cookie for a paywalled
/// publisher): what may be set, where each is sent, and how values are shown.
///
/// Values are secrets: they are stored in the catalog as given (the library needs them to resume), sent
/// only where they belong, and never shown in full — every output path (`show`, `--json`, `export`
/// unless asked, logs, errors) uses ``redact(_:)``.
package enum RequestHeaders {
    /// Headers the engine sets itself for resuming, proxying and framing; an asset cannot override them.
    static let reserved: Set<String> = [
        "accept-encoding", "connection", "content-length", "expect", "host", "if-range", "keep-alive",
        "proxy-authorization", "proxy-connection", "range", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// Headers that only go to the asset URL's own origin, never across a redirect to another one.
    package static let originBound: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    static let maxCount = 64
    static let maxValueBytes = 8192

    /// Checks every header of an asset.
    /// - Throws: `.invalidHeader` naming the header and the URL, never the value.
    static func validate(_ headers: [String: String], for url: URL) throws {
        if headers.count > maxCount {
            throw NewsstandError(
                .invalidHeader, "\(url.absoluteString) has \(headers.count) request headers; at most \(maxCount) are allowed")
        }
        var seen = Set<String>()
        for (name, value) in headers {
            if let problem = problem(name: name, value: value) {
                throw NewsstandError(.invalidHeader, "the request header \(name.debugDescription) of \(url.absoluteString) \(problem)")
            }
            if !seen.insert(name.lowercased()).inserted {
                throw NewsstandError(
                    .invalidHeader, "the request header \(name.debugDescription) of \(url.absoluteString) is given twice")
            }
        }
    }

    /// Why a header cannot be used, in words that never quote its value; nil when it can.
    package static func problem(name: String, value: String) -> String? {
        if name.isEmpty || !name.utf8.allSatisfy(isTokenByte) { return "is not a valid header name" }
        if reserved.contains(name.lowercased()) { return "is set by the library itself and cannot be given" }
        if value.utf8.count > maxValueBytes { return "has a value longer than \(maxValueBytes) bytes" }
        // CR and LF would start a header of their own (request smuggling); other controls are not text.
        if value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            return "has a control character (a line break?) in its value"
        }
        return nil
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A value as it may be shown: an authentication scheme (`Bearer`, `Basic`) is kept, the rest hidden.
    package static func redact(_ value: String) -> String {
        let parts = value.split(separator: " ", maxSplits: 1)
        if parts.count == 2, let scheme = parts.first, scheme.count <= 16,
            scheme.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "-" })
        {
            return "\(scheme) …(redacted)"
        }
        return "…(redacted)"
    }

    /// Whether two URLs have the same origin: scheme, host and port (the scheme's default when absent).
    package static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            return (scheme, url.host?.lowercased() ?? "", url.port ?? (scheme == "https" ? 443 : 80))
        }
        return origin(a) == origin(b)
    }
}

extension AssetRequest {
    /// Parses one `Name: value` header line, as `issues add-asset --header` takes it (curl's `-H` form).
    /// Spaces around the value are dropped.
    /// - Throws: `.invalidHeader` when there is no colon, or the name or value cannot be used; the
    ///   message never quotes the value.
    public static func parseHeader(_ line: String) throws -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: ":") else {
            throw NewsstandError(.invalidHeader, "a request header must be given as 'Name: value' (no colon found)")
        }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if let problem = RequestHeaders.problem(name: name, value: value) {
            throw NewsstandError(.invalidHeader, "the request header \(name.debugDescription) \(problem)")
        }
        return (name, value)
    }
}

extension AssetDownload {
    /// The request headers with their values hidden (`Authorization: Bearer …(redacted)`): what may be
    /// shown or logged.
    public var redactedHeaders: [String: String] {
        headers.mapValues(RequestHeaders.redact)
    }
}
