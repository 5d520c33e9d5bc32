/// How a download run behaves.
public struct DownloadOptions: Sendable, Hashable {
    /// How many assets download at once, across all issues.
    public var jobs: Int
    /// Keep an archive in the content folder after unpacking it.
    public var keepArchives: Bool
    /// The most bytes per second the whole run receives, across all its transfers (`nil`: no limit).
    /// Held over windows of a few seconds, by reading more slowly rather than buffering.
    public var rateLimit: Int64?
    /// How many connections one large asset may be fetched over, one byte range each. `nil` (the default)
    /// is automatic: an asset whose first response announces at least 64 MiB, from a server that honours
    /// ranges and names its version (a strong ETag or Last-Modified, sent back in `If-Range`), is measured
    /// over its first 300 ms and, only if that connection is capped, continues from there in up to 4
    /// ranges, with no request spent to find out. A number asks for that many (1: off) for assets
    /// of at least 8 MiB, with one request for the first byte to learn the size. Either way the ranges
    /// after the first open only when the first connection turns out to be capped, so an uncapped server
    /// keeps one connection; any disagreement between the ranges starts over on one connection. A
    /// segmented asset takes one of the `jobs` slots, and its ranges resume after a crash whatever this is.
    public var segments: Int?
    /// Waited on before each asset's request goes out (`nil`: none): how the service holds a run's assets
    /// to the per-host rule it applies to its feed checks.
    public var startGate: StartGate?

    /// Creates options.
    public init(jobs: Int = 4, keepArchives: Bool = false, rateLimit: Int64? = nil, segments: Int? = nil) {
        self.jobs = max(1, jobs)
        self.keepArchives = keepArchives
        self.rateLimit = rateLimit.map { max(1, $0) }
        self.segments = segments.map { min(max(1, $0), 16) }
    }
}

/// Decides when a request to an origin may start. The service's scheduler hands one to each download it
/// starts, so that the assets of one issue keep the spacing its feed checks and other downloads keep.
/// Compared by identity: two gates are equal only when they are the same gate.
public struct StartGate: Sendable, Hashable {
    private let identity = Identity()
    private let wait: @Sendable (_ origin: String) async throws -> Void

    private final class Identity: Sendable {}

    /// - Parameter wait: Returns when a request to `origin` (scheme, host and port) may start, counting it
    ///   as started; throws `CancellationError` when the task is cancelled first.
    public init(wait: @escaping @Sendable (_ origin: String) async throws -> Void) {
        self.wait = wait
    }

    public func waitForStart(origin: String) async throws { try await wait(origin) }

    public static func == (a: StartGate, b: StartGate) -> Bool { a.identity === b.identity }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(identity)) }
}
