import Foundation

/// A user name and password for HTTP Basic authentication, as a URL's `user:pass@` gives them.
package struct Credential: Codable, Sendable, Hashable {
    package var user: String
    package var password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` value (RFC 7617): `Basic base64(user:password)`.
    package var basicAuthorization: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

/// Credentials in URLs (`https://user:pass@host/feed`): splitting them off before anything is stored, the
/// origin they belong to, and hiding them in every line shown or logged.
public enum URLCredentials: Sendable {
    /// What replaces a password wherever a URL is shown: `https://user:***@host/…`, as curl's `-v` does.
    public static let mask = "***"

    /// The origin credentials are keyed by and sent to: `scheme://host:port`, lower-cased, with the
    /// scheme's default port spelled out, so `https://Host/` and `https://host:443/` are one origin.
    package static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// `url` without its password (the user name stays, so a stored URL still says it signs in), and the
    /// credential it carried; `url` itself and nil when it has no password.
    package static func split(_ url: URL) -> (url: URL, credential: Credential?) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let password = components.password
        else { return (url, nil) }
        let credential = Credential(user: components.user ?? "", password: password)
        components.password = nil
        return (components.url ?? url, credential)
    }

    /// `url` with no user information at all: what goes on the wire, where the credential travels in
    /// `Authorization` instead.
    package static func withoutUserInfo(_ url: URL) -> URL {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }

    /// `url` as it may be shown: its password replaced by ``mask``.
    public static func redacted(_ url: URL) -> String {
        redact(url.absoluteString)
    }

    /// `text` with the password of every URL in it replaced by ``mask`` (`scheme://user:***@host`, also
    /// for a URL that names only its user, as stored ones do): the
    /// last line of defence for every output, error and log line. Costs one scan for `://` when there is
    /// nothing to hide.
    public static func redact(_ text: String) -> String {
        guard mayHoldUserInfo(text) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var rest = Substring(text)
        while let schemeEnd = rest.range(of: "://") {
            result += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            // The authority ends at the first `/`, `?`, `#` or white space; user information is what comes
            // before its last `@`.
            let authorityEnd =
                rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" || $0.isWhitespace || $0 == "\"" })
                ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            // A user with no password is shown masked too: a stored URL keeps only its user, and its
            // password is in the credentials file, so `user:***@` says the same thing everywhere.
            if let at = authority.lastIndex(of: "@") {
                result += authority[..<at].prefix { $0 != ":" }
                result += ":" + mask
                result += authority[at...]
            } else {
                result += authority
            }
            rest = rest[authorityEnd...]
        }
        result += rest
        return result
    }

    /// Query keys whose values are secrets (compared lower-cased): API keys, OAuth tokens, signed-URL
    /// signatures and credentials (AWS SigV4, Google), session ids.
    static let secretQueryKeys: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "auth", "auth_token", "authorization",
        "api_key", "apikey", "api-key", "key", "secret", "client_secret", "password", "passwd", "pwd",
        "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "x-goog-signature", "x-goog-credential", "jwt", "session", "sessionid", "session_id",
    ]

    /// `text` as it may be shown or logged: passwords of URLs masked (``redact(_:)``) and the values of
    /// token-like query parameters (``secretQueryKeys``: `?token=…`, `&X-Amz-Signature=…`) replaced by
    /// ``mask``. What every log line, warning and error goes through; data written for a program to read back
    /// (`export`, `list --json`) keeps its URLs whole, as a signed URL must be to work.
    public static func redactSecrets(_ text: String) -> String {
        let text = redact(text)
        guard text.utf8.contains(UInt8(ascii: "=")) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var rest = Substring(text)
        // Each `?` or `&` that starts a `key=value` pair: the value runs to the next separator.
        while let start = rest.firstIndex(where: { $0 == "?" || $0 == "&" }) {
            let keyStart = rest.index(after: start)
            result += rest[...start]
            rest = rest[keyStart...]
            guard let equals = rest.firstIndex(where: { $0 == "=" || isQueryEnd($0) || $0 == "?" || $0 == "&" }),
                rest[equals] == "="
            else { continue }
            let key = rest[..<equals]
            let decoded = (key.removingPercentEncoding ?? String(key)).lowercased()
            result += rest[...equals]
            rest = rest[rest.index(after: equals)...]
            guard secretQueryKeys.contains(decoded) else { continue }
            let valueEnd = rest.firstIndex(where: { $0 == "&" || isQueryEnd($0) }) ?? rest.endIndex
            if valueEnd > rest.startIndex { result += mask }
            rest = rest[valueEnd...]
        }
        result += rest
        return result
    }

    /// Whether `character` ends a query value in running text: a fragment, white space, a quote or a bracket.
    private static func isQueryEnd(_ character: Character) -> Bool {
        character == "#" || character.isWhitespace || character == "\"" || character == "'" || character == "<"
            || character == ">" || character == ")" || character == "]" || character == ","
    }

    /// Whether `text` has both a `://` and an `@`, scanned over its UTF-8 bytes: `String.contains(_:)` with a
    /// string argument goes through Foundation (`CFStringFind` over UTF-16), which was a quarter of a
    /// 100,000-issue `issues list` (every 1 MiB chunk of output passes here).
    static func mayHoldUserInfo(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            // memchr: a byte loop here was 3 % of `list` at 1,000,000 issues (80 MB of table).
            guard let base = bytes.baseAddress, memchr(base, Int32(UInt8(ascii: "@")), bytes.count) != nil else {
                return false
            }
            var index = 0
            while index < bytes.count, let found = memchr(base + index, Int32(UInt8(ascii: ":")), bytes.count - index) {
                let colon = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if colon + 2 < bytes.count, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
                {
                    return true
                }
                index = colon + 1
            }
            return false
        }
    }
}
