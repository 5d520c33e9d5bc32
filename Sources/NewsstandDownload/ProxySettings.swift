import Foundation

/// The proxy to use for a URL, as curl reads it from the environment: `http_proxy`, `https_proxy`,
/// `all_proxy` and `no_proxy`, each in lower or upper case (lower case wins).
struct ProxySettings: Sendable {
    /// An HTTP proxy, with the credentials its URL carried (percent-decoded).
    struct Proxy: Sendable, Hashable {
        var host: String
        var port: Int
        var username: String?
        var password: String?

        /// `host:port`, as messages name the proxy (never with its credentials).
        var displayName: String {
            (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        }

        /// The value of `Proxy-Authorization` for these credentials, if any.
        var basicAuthorization: String? {
            guard let username else { return nil }
            return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
        }
    }

    /// A proxy variable that cannot be used; downloads fail with this rather than silently going direct.
    struct Invalid: Error, Sendable, Hashable {
        var variable: String
        var reason: String
    }

    var http: Result<Proxy, Invalid>?
    var https: Result<Proxy, Invalid>?
    var all: Result<Proxy, Invalid>?
    var noProxy: [String]

    static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxySettings
    {
        func value(_ name: String) -> (name: String, value: String)? {
            for key in [name, name.uppercased()] {
                if let value = environment[key], !value.isEmpty { return (key, value) }
            }
            return nil
        }
        let noProxy = (value("no_proxy")?.value ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }.filter { !$0.isEmpty }
        return ProxySettings(
            http: value("http_proxy").map(parse), https: value("https_proxy").map(parse),
            all: value("all_proxy").map(parse), noProxy: noProxy)
    }

    /// `[http://][user[:password]@]host[:port][/]`; the port defaults to 1080 as in curl.
    static func parse(_ variable: (name: String, value: String)) -> Result<Proxy, Invalid> {
        let text = variable.value.trimmingCharacters(in: .whitespaces)
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
            return .failure(Invalid(variable: variable.name, reason: "\(redacted(text)) is not a proxy URL"))
        }
        guard components.scheme?.lowercased() == "http" else {
            return .failure(
                Invalid(
                    variable: variable.name,
                    reason: "\(redacted(text)): only http:// proxies are supported, not \(components.scheme ?? "")://"))
        }
        // URLComponents decodes `user` and `password`: `p%40ss` is sent as `p@ss`.
        return .success(
            Proxy(
                host: host, port: components.port ?? 1080, username: components.user,
                password: components.password))
    }

    /// The proxy for `url`: none when `no_proxy` matches its host, else the scheme's own variable,
    /// else `all_proxy`.
    func proxy(for url: URL) -> Result<Proxy, Invalid>? {
        guard let host = url.host?.lowercased() else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if noProxy.contains(where: { Self.noProxyEntry($0, matches: bare) }) { return nil }
        return (url.scheme?.lowercased() == "https" ? https : http) ?? all
    }

    /// A proxy URL for messages: its password replaced.
    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard start < at else { return text }
        let user = text[start..<at].split(separator: ":", maxSplits: 1).first ?? ""
        return text[..<start] + user + ":***" + text[at...]
    }
}
