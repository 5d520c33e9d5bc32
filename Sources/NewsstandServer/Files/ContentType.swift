/// The `Content-Type` of a served file, by its extension; unknown types are offered as bytes (and the
/// `nosniff` header keeps the browser from guessing).
enum ContentType {
    private static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "xhtml": "application/xhtml+xml",
        "txt": "text/plain; charset=utf-8", "md": "text/plain; charset=utf-8", "css": "text/css; charset=utf-8",
        "json": "application/json", "xml": "application/xml", "csv": "text/csv; charset=utf-8",
        "pdf": "application/pdf", "epub": "application/epub+zip", "cbz": "application/vnd.comicbook+zip",
        "cbr": "application/vnd.comicbook-rar", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "mobi": "application/x-mobipocket-ebook",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "avif": "image/avif",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "m4b": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg",
        "oga": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac", "wav": "audio/wav",
        "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mov": "video/quicktime",
        "vtt": "text/vtt; charset=utf-8", "srt": "application/x-subrip",
    ]

    static func of(path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "application/octet-stream" }
        return types[path[path.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    /// Whether the browser would run scripts in it (HTML, XML, SVG): such files are served sandboxed.
    static func isActive(_ type: String) -> Bool {
        type.hasPrefix("text/html") || type.contains("xml") || type.hasPrefix("image/svg")
    }

    /// Whether a browser plays it in an `<audio>` / `<video>` element.
    static func isAudio(_ type: String) -> Bool { type.hasPrefix("audio/") }
    static func isVideo(_ type: String) -> Bool { type.hasPrefix("video/") }
}
