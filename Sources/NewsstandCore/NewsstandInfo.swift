/// The library's version, sent in `User-Agent`.
public enum NewsstandInfo: Sendable {
    /// The one version source: `issues --version`, the `User-Agent`, `make package-check` (which reads this
    /// line), `make release-tag` and the CHANGELOG agree with it, and a test holds them together.
    public static let version = "0.4.0"

    /// The `User-Agent` every request of the library sends: feeds, downloads and ranges alike.
    package static let userAgent = "issues/\(version)"
}
