import NewsstandCore

/// The `Content-Type` of a served file, by its extension; unknown types are offered as bytes (and the
/// `nosniff` header keeps the browser from guessing).
enum ContentType {
    /// The type from the one table (`MediaTypes`), with the charset for text: every text file the library
    /// holds is taken as UTF-8.
    static func of(path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let type = MediaTypes.type(ofFileNamed: name) else { return "application/octet-stream" }
        return type.hasPrefix("text/") ? type + "; charset=utf-8" : type
    }

    /// Whether the browser would run scripts in it (HTML, XML, SVG): such files are served sandboxed.
    static func isActive(_ type: String) -> Bool {
        type.hasPrefix("text/html") || type.contains("xml") || type.hasPrefix("image/svg")
    }

    /// Whether a browser plays it in an `<audio>` / `<video>` element.
    static func isAudio(_ type: String) -> Bool { type.hasPrefix("audio/") }
    static func isVideo(_ type: String) -> Bool { type.hasPrefix("video/") }
}
