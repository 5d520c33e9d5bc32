import AsyncHTTPClient

/// The library module's version, sent in `User-Agent`.
public enum NewsstandInfo: Sendable {
    public static let version = "0.1.0"
}

extension Library {
    /// How a library downloads and unpacks.
    public struct Configuration: Sendable {
        /// Retries and backoff for transient failures.
        public var retry: RetryPolicy
        /// Limits that stop archive bombs.
        public var unpackLimits: UnpackLimits
        /// The longest wait for a TCP (and TLS) connection.
        public var connectTimeout: Duration
        /// The longest silence while reading a response.
        public var readTimeout: Duration
        /// How many redirects a download follows.
        public var maxRedirects: Int
        /// Flush each completed download to stable storage before it counts as downloaded, so that even a
        /// power cut cannot leave a "downloaded" asset with missing bytes. Costs a disk flush per asset.
        public var syncDownloads: Bool
        /// An HTTP client to use instead of the library's own (which honours `http_proxy`, `https_proxy`
        /// and `no_proxy`). The library never shuts an injected client down.
        public var httpClient: HTTPClient?

        /// Creates a configuration.
        public init(
            retry: RetryPolicy = RetryPolicy(), unpackLimits: UnpackLimits = .default,
            connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60), maxRedirects: Int = 10,
            syncDownloads: Bool = true, httpClient: HTTPClient? = nil
        ) {
            self.retry = retry
            self.unpackLimits = unpackLimits
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.maxRedirects = maxRedirects
            self.syncDownloads = syncDownloads
            self.httpClient = httpClient
        }
    }
}
