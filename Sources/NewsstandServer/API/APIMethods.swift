import HTTPTypes

/// The methods each API path answers (as the OpenAPI document lists them): any other method on a known
/// path is 405 with `Allow`, not the router's 404.
enum APIMethods {
    /// Path patterns (`*` matches one segment) and their methods.
    static let table: [([Substring], [HTTPRequest.Method])] = [
        (["api", "session"], [.get, .head]),
        (["api", "openapi.json"], [.get, .head]),
        (["api", "issues"], [.get, .head]),
        (["api", "issues", "*"], [.get, .head, .delete]),
        (["api", "issues", "*", "assets"], [.get, .head]),
        (["api", "issues", "*", "*"], [.post]),
        (["api", "subscriptions"], [.get, .head, .post]),
        (["api", "subscriptions", "*"], [.delete]),
        (["api", "subscriptions", "*", "*"], [.post]),
        (["api", "events"], [.get, .head]),
    ]

    /// The methods `path` answers, or nil when it is no API path.
    static func allowed(path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for (pattern, methods) in table where pattern.count == segments.count {
            if zip(pattern, segments).allSatisfy({ $0 == "*" || $0 == $1 }) { return methods }
        }
        return nil
    }
}
