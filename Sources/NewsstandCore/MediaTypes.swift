import Foundation

/// The one table of media types and file extensions: the server's `Content-Type` of a file and the
/// sidecar's `type` read it by extension, and a filed issue's file takes its extension from the response's
/// `Content-Type` through it when the URL's path has none (`8f3a2c` served as `audio/mpeg` → `.mp3`).
package enum MediaTypes {
    /// Extension (lowercase) → media type, without parameters.
    private static let byExtension: [String: String] = [
        "html": "text/html", "htm": "text/html", "xhtml": "application/xhtml+xml", "txt": "text/plain",
        "md": "text/plain", "css": "text/css", "json": "application/json", "xml": "application/xml",
        "csv": "text/csv", "pdf": "application/pdf", "epub": "application/epub+zip",
        "cbz": "application/vnd.comicbook+zip", "cbr": "application/vnd.comicbook-rar", "zip": "application/zip",
        "gz": "application/gzip", "tar": "application/x-tar", "mobi": "application/x-mobipocket-ebook",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "avif": "image/avif", "mp3": "audio/mpeg", "m4a": "audio/mp4", "m4b": "audio/mp4",
        "aac": "audio/aac", "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac",
        "wav": "audio/wav", "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mov": "video/quicktime",
        "vtt": "text/vtt", "srt": "application/x-subrip",
    ]

    /// Media type → the extension a file of that type gets: the usual one where several map to a type, and the
    /// unregistered spellings servers send (`audio/mp3`, `audio/x-m4a`).
    private static let preferredExtension: [String: String] = {
        var table: [String: String] = [:]
        for (ext, type) in byExtension where table[type] == nil || ext.count < (table[type]?.count ?? 0) {
            table[type] = ext
        }
        let usual = [
            "text/html": "html", "text/plain": "txt", "image/jpeg": "jpg", "audio/mp4": "m4a", "audio/ogg": "ogg",
            "video/mp4": "mp4", "audio/mp3": "mp3", "audio/mpeg3": "mp3", "audio/x-mpeg": "mp3", "audio/x-mp3": "mp3",
            "audio/x-m4a": "m4a", "audio/x-wav": "wav", "audio/x-flac": "flac", "image/jpg": "jpg",
            "image/pjpeg": "jpg", "application/x-pdf": "pdf", "application/x-zip-compressed": "zip",
            "application/x-cbz": "cbz", "application/x-cbr": "cbr", "video/x-m4v": "m4v",
        ]
        table.merge(usual) { _, usual in usual }
        return table
    }()

    /// The media type of a file named `fileName`, by its extension; nil when unknown.
    package static func type(ofFileNamed fileName: String) -> String? {
        guard let ext = fileExtension(of: fileName) else { return nil }
        return byExtension[ext.lowercased()]
    }

    /// The extension for a `Content-Type` header value (parameters and case ignored); nil when the type is
    /// unknown or says nothing (`application/octet-stream`).
    package static func fileExtension(forContentType header: String) -> String? {
        let type = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? header
        return preferredExtension[type.trimmingCharacters(in: .whitespaces).lowercased()]
    }

    /// The extension of `fileName` when it has a plausible one: after the last dot, 1 to 8 letters or digits,
    /// not the whole name (`.bashrc` has none).
    package static func fileExtension(of fileName: String) -> String? {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return nil }
        let ext = fileName[fileName.index(after: dot)...]
        guard (1...8).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return nil
        }
        return String(ext)
    }
}
