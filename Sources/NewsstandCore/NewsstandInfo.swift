/// The library's version, sent in `User-Agent`.
public enum NewsstandInfo: Sendable {
    public static let version = "0.1.0"

    /// The `User-Agent` every request of the library sends: feeds, downloads and ranges alike.
    package static let userAgent = "issues/\(version)"
}
