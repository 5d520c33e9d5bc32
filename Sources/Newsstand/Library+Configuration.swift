import AsyncHTTPClient
import Foundation
import NewsstandCore
import NewsstandArchive
import NewsstandDownload
import Synchronization

extension Library {
    /// How a library downloads and unpacks.
    public struct Configuration: Sendable {
        /// The download engine's part: timeouts, retries, redirects, trust and client.
        var engine = DownloadEngine.Configuration()
        /// Limits that stop archive bombs.
        public var unpackLimits: UnpackLimits
        /// Makes an issue's cover when its download completes (nil: no covers; the `issues` command sets
        /// `NewsstandCovers.CoverMaker`, which keeps the image libraries out of this product).
        public var coverMaker: (any CoverMaking)? = nil
        /// Flush each completed download to stable storage before it counts as downloaded, so that even a
        /// power cut cannot leave a "downloaded" asset with missing bytes. Costs a disk flush per asset, and
        /// a download then goes no faster than the disk writes.
        public var syncDownloads: Bool {
            get { engine.flushesToDisk }
            set { engine.flushesToDisk = newValue }
        }

        /// Retries and backoff for transient failures.
        public var retry: RetryPolicy {
            get { engine.retry }
            set { engine.retry = newValue }
        }
        /// The longest wait for a TCP (and TLS) connection.
        public var connectTimeout: Duration {
            get { engine.connectTimeout }
            set { engine.connectTimeout = newValue }
        }
        /// The longest silence while reading a response.
        public var readTimeout: Duration {
            get { engine.readTimeout }
            set { engine.readTimeout = newValue }
        }
        /// The minimum throughput of a transfer: an attempt under it is given up as stalled (and retried as a
        /// failed attempt). Nil turns the limit off. Default 1 KiB per 60 s.
        public var stallLimit: StallLimit? {
            get { engine.stallLimit }
            set { engine.stallLimit = newValue }
        }
        /// The longest one feed fetch (of `subscribe` or `sync`) may take, its retries and redirects included:
        /// past it the subscription fails for this round, so a server that trickles a feed slowly enough to
        /// pass ``stallLimit`` still cannot hold a `sync` for ever. Default 5 minutes.
        public var feedDeadline: Duration {
            get { engine.documentDeadline }
            set { engine.documentDeadline = newValue }
        }
        /// How many redirects a download follows.
        public var maxRedirects: Int {
            get { engine.maxRedirects }
            set { engine.maxRedirects = newValue }
        }
        /// An HTTP client to use instead of the library's own (which honours `http_proxy`, `https_proxy`,
        /// `all_proxy`, `no_proxy`, `SSL_CERT_FILE` and `SSL_CERT_DIR`). The library never shuts an injected
        /// client down, and ignores ``trustedCertificateFiles`` for it.
        public var httpClient: HTTPClient? {
            get { engine.httpClient }
            set { engine.httpClient = newValue }
        }
        /// PEM files of CA certificates to trust in addition to the system's trust store (and to
        /// `SSL_CERT_FILE` / `SSL_CERT_DIR`): a private CA, without root. The CLI's `--cacert`.
        public var trustedCertificateFiles: [URL] {
            get { engine.trustedCertificateFiles }
            set { engine.trustedCertificateFiles = newValue }
        }

        /// Request headers by host name, sent with every request to that host (feeds and assets alike) unless
        /// the request has its own header of that name: a config file's `headers`. Host names compare
        /// case-insensitively.
        public var headersByHost: [String: [String: String]] {
            get { engine.headersByHost }
            set { engine.headersByHost = Dictionary(newValue.map { ($0.key.lowercased(), $0.value) }) { $1 } }
        }
        /// The proxy for http and https when the environment names none (`http_proxy`, `https_proxy`,
        /// `all_proxy`, either case): a config file's `proxy`. The environment, set for one run, wins.
        public var defaultProxy: String?
        /// The hosts reached directly when the environment has no `no_proxy`: a config file's `no-proxy`.
        public var defaultNoProxy: String?
        /// Free bytes on the library's file system under which `library.low-space` is announced: once when a
        /// download's commit finds less, then not again until the space was back above it. Nil never
        /// announces. Default 1 GiB: an episode or two of room, time enough for a hook to prune.
        public var lowSpaceThreshold: Int64? = 1 << 30
        /// How new issues are filed when neither they (``Library/addIssue(named:date:assets:publication:template:)``)
        /// nor their subscription name a template: a config file's `layout-template`. Nil: one folder per issue.
        /// Existing issues keep where they are.
        public var layoutTemplate: LayoutTemplate?

        /// Creates a configuration.
        public init(
            retry: RetryPolicy = RetryPolicy(), unpackLimits: UnpackLimits = .default,
            connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60), maxRedirects: Int = 10,
            syncDownloads: Bool = true, httpClient: HTTPClient? = nil, trustedCertificateFiles: [URL] = []
        ) {
            var engine = DownloadEngine.Configuration()
            engine.retry = retry
            engine.connectTimeout = connectTimeout
            engine.readTimeout = readTimeout
            engine.maxRedirects = maxRedirects
            engine.httpClient = httpClient
            engine.trustedCertificateFiles = trustedCertificateFiles
            engine.flushesToDisk = syncDownloads
            self.engine = engine
            self.unpackLimits = unpackLimits
        }
    }
}

extension Library {
    /// Replaces how the library downloads and unpacks, for everything started from now on (a service's
    /// SIGHUP after its config file changed): proxies, trust, headers, limits, the filing template.
    ///
    /// Transfers and feed fetches in flight finish on the engine they started with; the next one starts a
    /// new engine with the new settings. The old engine is shut down with the library.
    public func reconfigure(_ configuration: Configuration) {
        settings.withLock { $0 = configuration }
        if let engine {
            retiredEngines.append(engine)
            self.engine = nil
        }
    }

    /// The environment the engine reads proxies from: the process's, with the configuration's default proxy
    /// where it names none.
    static func environment(_ environment: [String: String], with configuration: Configuration) -> [String: String] {
        var environment = environment
        let proxyVariables = ["http_proxy", "https_proxy", "all_proxy"].flatMap { [$0, $0.uppercased()] }
        if let proxy = configuration.defaultProxy, !proxyVariables.contains(where: { environment[$0] != nil }) {
            environment["http_proxy"] = proxy
            environment["https_proxy"] = proxy
        }
        if let noProxy = configuration.defaultNoProxy, environment["no_proxy"] == nil, environment["NO_PROXY"] == nil {
            environment["no_proxy"] = noProxy
        }
        return environment
    }
}
