import Foundation

/// One `no_proxy` entry against one host, as curl decides it (lib/noproxy.c).
extension ProxySettings {
    /// Whether `entry` sends `host` direct. `*` matches every host. When the host is an IP literal, an
    /// address entry matches the same address (in any spelling: `::1` is `0:0::1`) and a CIDR entry matches
    /// every address in its range (`127.0.0.0/8`, `::1/128`, `fd00::/8`); a name never matches an IP.
    /// Otherwise a name matches itself and its subdomains, with or without a leading dot.
    ///
    /// - Parameters:
    ///   - entry: one comma-separated element of `no_proxy`, trimmed and lower-cased.
    ///   - host: the URL's host, lower-cased, without the brackets of an IPv6 literal.
    static func noProxyEntry(_ entry: String, matches host: String) -> Bool {
        if entry == "*" { return true }
        if let address = IPAddressBytes(host) {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let range = IPAddressBytes(unbracketed(parts.first ?? "")), range.bytes.count == address.bytes.count
            else { return false }
            let bits = address.bytes.count * 8
            // No `/` is the whole address; a prefix longer than the address, or not a number, matches nothing.
            guard let length = parts.count > 1 ? Int(parts[1]) : bits, (0...bits).contains(length) else { return false }
            return address.sharesPrefix(of: length, with: range)
        }
        // A CIDR or address entry never names a host: only names are compared as names.
        let suffix = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
        return host == suffix || host.hasSuffix("." + suffix)
    }

    private static func unbracketed(_ text: String) -> String {
        text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
    }
}
