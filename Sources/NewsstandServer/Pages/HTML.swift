import Foundation
import NewsstandCore

/// Typed-enough HTML: every string that is not our own markup goes through ``escape(_:)`` (names, titles,
/// URLs and errors come from feeds and must never become markup).
enum HTML {
    /// Escapes text for element content and for quoted attribute values.
    static func escape(_ text: String) -> String { MarkupText.escaped(text) }

    /// A whole page: one stylesheet and one script, both under this response's nonce.
    static func page(title: String, nonce: String, csrf: String, current: String, body: String) -> String {
        func nav(_ href: String, _ label: String) -> String {
            "<a href=\"\(href)\"\(current == href ? " aria-current=\"page\"" : "")>\(label)</a>"
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="csrf-token" content="\(escape(csrf))">
            <title>\(escape(title)) · issues</title>
            <link rel="stylesheet" href="/static/app.css" nonce="\(nonce)">
            <link rel="icon" href="data:,">
            </head>
            <body>
            <header class="top"><nav aria-label="Main">\(nav("/", "Shelf"))\(nav("/subscriptions", "Subscriptions"))<a href="/opds">OPDS</a></nav></header>
            <main id="main">
            \(body)
            </main>
            <script src="/static/app.js" nonce="\(nonce)"></script>
            </body>
            </html>
            """
    }

    /// A hidden form field with the CSRF token.
    static func csrfField(_ token: String) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(token))\">"
    }
}

/// Reading `application/x-www-form-urlencoded` bodies and query strings (`+` is a space), and writing them.
enum Form {
    static func parse(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let rawKey = parts.first else { continue }
            let key = decode(rawKey)
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if fields[key] == nil { fields[key] = value }
        }
        return fields
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986).
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
