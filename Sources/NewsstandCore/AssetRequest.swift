import Foundation

/// What is needed to add an asset: its URL and how to treat it.
public struct AssetRequest: Sendable, Hashable {
    /// Where the asset is fetched from: http or https.
    public var url: URL
    /// The expected SHA-256 as 64 hexadecimal digits, or nil.
    public var sha256: String?
    /// Whether an archive is unpacked into the folder (true) or kept as a plain file.
    public var unpack: Bool
    /// Request headers sent with every request of this asset (NewsstandKit's `addAsset(with: URLRequest)`
    /// could carry them): an `Authorization` or a `Cookie` for a paywalled publisher. Kept in the catalog,
    /// never shown in full; `Authorization`, `Cookie` and `Proxy-Authorization` are not sent after a
    /// redirect to another origin. Headers the library sets itself (`Range`, `If-Range`, `Host`,
    /// `Accept-Encoding`, …) cannot be given.
    public var headers: [String: String]
    /// Free-form data for the embedding app.
    public var userInfo: [String: String]

    /// Creates a request.
    /// - Parameters:
    ///   - url: Where the asset is fetched from: http or https.
    ///   - sha256: The expected SHA-256 as 64 hexadecimal digits, or nil.
    ///   - unpack: Whether an archive is unpacked into the folder.
    ///   - headers: Request headers for every request of this asset (see ``headers``).
    ///   - userInfo: Free-form data for the embedding app.
    public init(
        url: URL, sha256: String? = nil, unpack: Bool = true, headers: [String: String] = [:],
        userInfo: [String: String] = [:]
    ) {
        self.url = url
        self.sha256 = sha256?.lowercased()
        self.unpack = unpack
        self.headers = headers
        self.userInfo = userInfo
    }

    /// Parses a URL string, accepting only absolute http and https URLs with a host and, if given, a
    /// port from 1 to 65535. Every URL from outside (the command line, the catalog, an import) passes
    /// here before anything connects to it.
    /// - Throws: `.invalidURL` naming the text.
    public static func parseURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw NewsstandError(.invalidURL, "\(text.debugDescription) is not an http or https URL")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw NewsstandError(.invalidURL, "\(text.debugDescription) has port \(port), outside 1–65535")
        }
        return url
    }

    /// True when `text` is exactly 64 hexadecimal digits.
    public static func isValidSHA256(_ text: String) -> Bool {
        text.utf8.count == 64
            && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }
    }

    package func validate() throws {
        _ = try AssetRequest.parseURL(url.absoluteString)
        if let sha256, !AssetRequest.isValidSHA256(sha256) {
            throw NewsstandError(
                .invalidChecksum,
                "\(sha256.debugDescription) is not a SHA-256 (64 hexadecimal digits) for \(url.absoluteString)")
        }
        try RequestHeaders.validate(headers, for: url)
    }

    package func makeAsset(id: String) -> AssetDownload {
        AssetDownload(id: id, url: url, sha256: sha256, unpack: unpack, headers: headers, userInfo: userInfo)
    }
}
