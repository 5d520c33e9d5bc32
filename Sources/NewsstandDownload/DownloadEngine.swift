// Over 400 lines, one job: one attempt loop (resume, redirects, retries, verify, the automatic split) and
// the clients it uses; configuration, segments, delegates, error classification, progress throttling and
// document fetches are in their own files.
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
import NewsstandCore

/// Fetches one asset into its partial file, resuming, retrying and verifying: the HTTP half of a download.
/// One engine (and one `HTTPClient` per proxy setting) serves every download of a library.
package final class DownloadEngine: Sendable {
    struct Job: Sendable {
        var assetID: String
        var url: URL
        var sha256: String?
        /// The asset's own request headers, sent on every request of it (see ``hopHeaders(_:adding:from:to:)``).
        var headers: [String: String] = [:]
        var partialPath: String
        var recordPath: String
        /// The run's bandwidth budget, shared by every transfer of the run.
        var rateLimiter: RateLimiter? = nil
        /// Connections to fetch a large asset over in byte ranges: a number asked for (1: one connection),
        /// or nil for the automatic choice (see ``DownloadOptions/segments``).
        var segments: Int? = 1
    }

    struct Result: Sendable {
        var size: Int64
        var record: ResumeRecord?
        var bytesFetched: Int64
    }

    enum Progress: Sendable {
        case started(resumingFrom: Int64, expected: Int64?)
        case bytes(received: Int64, expected: Int64?, bytesPerSecond: Double)
        case retrying(attempt: Int, delay: Duration, reason: String)
    }

    /// How one request reaches its server.
    enum Route: Sendable, Hashable {
        /// Plain http (or a scheme AsyncHTTPClient refuses) straight to the server.
        case direct
        /// https straight to the server.
        case directTLS
        /// https through a proxy: a `CONNECT` tunnel (AHC's own proxy support), TLS inside it.
        case tunnel(ProxySettings.Proxy)
        /// Plain http through a proxy: the request itself goes to the proxy, in absolute form.
        case forward(ProxySettings.Proxy)

        var proxy: ProxySettings.Proxy? {
            switch self {
            case .direct, .directTLS: return nil
            case .tunnel(let proxy), .forward(let proxy): return proxy
            }
        }

        /// Whether its connections speak TLS, and so need the trust roots loaded.
        var usesTLS: Bool {
            switch self {
            case .directTLS, .tunnel: return true
            case .direct, .forward: return false
            }
        }
    }

    let configuration: Configuration
    let logger: Logger
    private let environment: [String: String]
    private let proxies: ProxySettings
    private let ownedClients: Mutex<[ClientKey: HTTPClient]>
    /// The TLS configuration with the extra trust roots, read once, on the first client made.
    private let tls: Mutex<TLSConfiguration?>
    private let injected: HTTPClient?

    package init(
        configuration: Configuration, logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.configuration = configuration
        self.logger = logger
        self.environment = environment
        self.proxies = ProxySettings.fromEnvironment(environment)
        self.injected = configuration.httpClient
        self.ownedClients = Mutex([:])
        self.tls = Mutex(nil)
    }

    package func shutdown() async throws {
        let clients = ownedClients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in clients { try await client.shutdown() }
    }

    // A library dropped without `shutdown()` drops its engine: AsyncHTTPClient traps in debug builds when a
    // client that was not shut down is deinitialised, so the engine shuts its own clients down here. The
    // callback form keeps each client alive until its shutdown has finished (a shut-down client deinits
    // quietly), and needs nothing from this object.
    deinit {
        let clients = ownedClients.withLock { Array($0.values) }
        guard !clients.isEmpty else { return }
        let logger = self.logger
        logger.debug("shutting down \(clients.count) HTTP client(s) of a library dropped without shutdown()")
        for client in clients {
            client.shutdown { error in
                logger.debug(
                    "HTTP client of a dropped library shut down",
                    metadata: error.map { ["error": "\($0)"] } ?? [:])
            }
        }
    }

    /// How a request for `url` travels: direct, or through the proxy the environment names for it.
    /// - Throws: `NewsstandError` when that proxy variable cannot be used.
    func route(for url: URL) throws -> Route {
        // An injected client brings its own proxy configuration.
        // Other schemes go direct, for AsyncHTTPClient to refuse.
        guard injected == nil, ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            let choice = proxies.proxy(for: url)
        else { return url.scheme?.lowercased() == "https" ? .directTLS : .direct }
        switch choice {
        case .failure(let invalid):
            throw NewsstandError(.network, "\(invalid.variable): \(invalid.reason)")
        case .success(let proxy):
            return url.scheme?.lowercased() == "https" ? .tunnel(proxy) : .forward(proxy)
        }
    }

    /// What an owned client is made for: a route, and whether it may multiplex requests over HTTP/2.
    struct ClientKey: Sendable, Hashable {
        var route: Route
        /// HTTP/1.1 only: a connection per request in flight (the ranges of a segmented download).
        var separateConnections: Bool
    }

    /// The client for `route`: the injected one, or an owned one per route (and connection kind).
    ///
    /// HTTP/2 where the server offers it in the TLS handshake (ALPN `h2`, else `http/1.1`; plain http is
    /// always HTTP/1.1): the assets of one host then share one connection and one handshake, as
    /// `curl --parallel --http2` does, instead of a handshake for each of `jobs` connections. The first
    /// version of the engine set `.http1Only` without giving a reason (no test or comment relied on it);
    /// what does rely on HTTP/1.1 is a segmented download, whose ranges must travel on connections of
    /// their own to beat a per-connection cap (``SegmentedTransfer``), so it asks for `separateConnections`.
    func client(for route: Route, separateConnections: Bool = false) async throws -> HTTPClient {
        if let injected { return injected }
        // Plain http is HTTP/1.1 whatever the setting: one client serves both kinds.
        let key = ClientKey(route: route, separateConnections: separateConnections && route.usesTLS)
        if let client = ownedClients.withLock({ $0[key] }) { return client }
        // Plain http never reads the CA files: with SSL_CERT_DIR=/etc/ssl/certs that is hundreds of
        // certificates parsed and held for nothing.
        let tls = route.usesTLS ? try await tlsConfiguration() : TLSConfiguration.makeClientConfiguration()
        return ownedClients.withLock { clients in
            if let client = clients[key] { return client }
            var config = HTTPClient.Configuration(
                tlsConfiguration: tls,
                // The engine follows redirects itself, so that each hop takes the route (proxy or not)
                // its own URL calls for.
                redirectConfiguration: .disallow,
                timeout: .init(
                    connect: DownloadEngine.timeAmount(configuration.connectTimeout),
                    read: DownloadEngine.timeAmount(configuration.readTimeout)),
                decompression: .disabled)
            config.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            config.httpVersion = key.separateConnections ? .http1Only : .automatic
            // Our own retry loop (with backoff, Retry-After and a bounded budget) handles failed connections;
            // the pool's internal retrying would otherwise hide them until the connect timeout.
            config.connectionPool.retryConnectionEstablishment = false
            let absoluteForm = if case .forward = route { true } else { false }
            config.http1_1ConnectionDebugInitializer = { channel in
                channel.eventLoop.submit {
                    // Larger socket reads than NIO's 64 KiB default: fewer, bigger body parts for the file sink; at
                    // most 256 KiB, as larger reads bought no throughput and each one is held until written.
                    try channel.syncOptions?.setOption(
                        ChannelOptions.recvAllocator,
                        value: AdaptiveRecvByteBufferAllocator(minimum: 64 << 10, initial: 256 << 10, maximum: 256 << 10))
                    if absoluteForm { try AbsoluteFormHandler.install(on: channel) }
                }
            }
            // The same socket reads on an HTTP/2 connection (never a forward proxy's: that is plain http).
            config.http2ConnectionDebugInitializer = { channel in
                channel.eventLoop.submit {
                    try channel.syncOptions?.setOption(
                        ChannelOptions.recvAllocator,
                        value: AdaptiveRecvByteBufferAllocator(minimum: 64 << 10, initial: 256 << 10, maximum: 256 << 10))
                }
            }
            if case .tunnel(let proxy) = route {
                config.proxy = .server(
                    host: proxy.host, port: proxy.port,
                    authorization: proxy.username.map { .basic(username: $0, password: proxy.password ?? "") })
            }
            let client = HTTPClient(
                eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: config)
            clients[key] = client
            return client
        }
    }

    /// `duration` in NIO's nanoseconds, to the full precision both keep (not whole seconds); negative
    /// durations become zero and ones past about 292 years the largest amount.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return .nanoseconds(0) }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .nanoseconds(.max) }
        let (total, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return .nanoseconds(overflow2 ? .max : max(0, total))
    }

    /// The headers of one hop of an asset's request: the engine's own, then the asset's. `Authorization`,
    /// `Cookie` and `Proxy-Authorization` go only to the asset URL's own origin (scheme, host and port): a
    /// redirect to another origin does not receive them, as curl and AsyncHTTPClient do.
    static func hopHeaders(_ base: HTTPHeaders, adding asset: [String: String], from origin: URL, to hop: URL)
        -> HTTPHeaders
    {
        guard !asset.isEmpty else { return base }
        var headers = base
        let sameOrigin = RequestHeaders.isSameOrigin(origin, hop)
        for name in asset.keys.sorted() {
            guard let value = asset[name] else { continue }
            if !sameOrigin, RequestHeaders.originBound.contains(name.lowercased()) { continue }
            // The asset's value wins over the engine's default (a publisher's own User-Agent, Accept).
            headers.replaceOrAdd(name: name, value: value)
        }
        return headers
    }

    private func tlsConfiguration() async throws -> TLSConfiguration {
        if let tls = tls.withLock({ $0 }) { return tls }
        let files = configuration.trustedCertificateFiles
        let environment = self.environment
        let extra = try await runBlocking { try TrustRoots.load(files: files, environment: environment) }
        let loaded = TrustRoots.configuration(adding: extra)
        tls.withLock { $0 = loaded }
        return loaded
    }

    /// The request for one hop: to the origin, or (plain http through a proxy) to the proxy with the
    /// origin in `Host`, which `AbsoluteFormHandler` turns into an absolute-form request line.
    ///
    /// Every request of the engine is made here, so this is where a URL's credentials become Basic
    /// authentication: for the hop's own origin only (the URL's `user:pass@`, else the store's entry for
    /// that origin), never for a redirect to another origin, and the user information never goes on the
    /// wire in the URL. An `Authorization` the asset gives itself wins.
    func request(for url: URL, route: Route, headers: HTTPHeaders) throws -> HTTPClient.Request {
        var headers = headers
        if !headers.contains(name: "Authorization"),
            let credential = URLCredentials.split(url).credential ?? configuration.credentials?.credential(for: url)
        {
            headers.add(name: "Authorization", value: credential.basicAuthorization)
        }
        if let host = url.host?.lowercased(), let own = configuration.headersByHost[host] {
            for name in own.keys.sorted() where !headers.contains(name: name) {
                if let value = own[name] { headers.add(name: name, value: value) }
            }
        }
        let url = URLCredentials.withoutUserInfo(url)
        guard case .forward(let proxy) = route else {
            return try HTTPClient.Request(url: url.absoluteString, method: .GET, headers: headers)
        }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = url.host else {
            throw HTTPClientError.invalidURL
        }
        components.scheme = "http"
        components.host = proxy.host
        components.port = proxy.port
        components.user = nil
        components.password = nil
        guard let toProxy = components.url else { throw HTTPClientError.invalidURL }
        var request = try HTTPClient.Request(url: toProxy.absoluteString, method: .GET, headers: headers)
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        request.headers.replaceOrAdd(name: "Host", value: bracketed + (url.port.map { $0 == 80 ? "" : ":\($0)" } ?? ""))
        if let authorization = proxy.basicAuthorization {
            request.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization)
        }
        return request
    }

    /// Downloads `job` into its partial file until the whole body is there, retrying transient failures.
    /// - Throws: `NewsstandError` for permanent failures, `CancellationError` when cancelled.
    func fetch(_ job: Job, progress: @escaping @Sendable (Progress) -> Void) async throws -> Result {
        // A segment plan on disk is always continued in segments (its partial file has holes); otherwise
        // segments are tried when asked for, and anything they cannot use falls back to one connection here.
        if (job.segments ?? 1) > 1 || ResumeRecord.load(job.recordPath)?.segments != nil,
            let result = try await fetchSegmented(job, progress: progress)
        {
            return result
        }
        let hashing = job.sha256 != nil
        let flushed = configuration.flushesToDisk
        let sink = try await runBlocking {
            try FileSink(path: job.partialPath, recordPath: job.recordPath, hashing: hashing, startsWriteback: flushed)
        }
        let startSize = sink.size
        // Automatic segments: the first response of a fresh download may turn into a segment plan.
        // Not under a run's rate limit below the uncapped rate: the limit itself would look like a server's cap,
        // and more connections would share the same budget.
        let limited = job.rateLimiter.map { Double($0.bytesPerSecond) < configuration.uncappedRate } ?? false
        var splitAbove = job.segments == nil && startSize == 0 && !limited ? SegmentPlan.automaticThreshold : nil
        var failuresWithoutProgress = 0
        // Progress means reaching further than ever before; re-fetching bytes after a restart is not.
        var furthest = startSize
        var fetched: Int64 = 0
        let started = ContinuousClock.now
        while true {
            try Task.checkCancellation()
            var record = ResumeRecord.load(job.recordPath)
            var offset = sink.size
            // Bytes whose origin cannot be proven (no validator to send in If-Range) are never appended to.
            if offset > 0, record?.ifRangeValidator == nil || (record?.expectedBytes.map { offset > $0 } ?? false) {
                try await runBlocking { try sink.truncateNow() }
                offset = 0
                record = nil
            }
            var headers = HTTPHeaders()
            headers.add(name: "User-Agent", value: NewsstandInfo.userAgent)
            headers.add(name: "Accept-Encoding", value: "identity")
            var validator: String?
            if offset > 0, let record, let value = record.ifRangeValidator {
                validator = value
                headers.add(name: "Range", value: "bytes=\(offset)-")
                headers.add(name: "If-Range", value: value)
            }
            let throttle = ProgressThrottle(start: started, baseline: startSize, bodyStart: offset)
            func makeDelegate() -> ResponseDelegate {
                ResponseDelegate(
                    sink: sink, requestedOffset: offset, sentValidator: validator, url: job.url,
                    splitAbove: offset == 0 ? splitAbove : nil, uncappedRate: configuration.uncappedRate,
                    onStart: { from, expected in
                        throttle.bodyStart.withLock { $0 = from }
                        progress(.started(resumingFrom: from, expected: expected))
                    },
                    onProgress: { received, expected in
                        let total = throttle.bodyStart.withLock { $0 } + received
                        if let rate = throttle.shouldReport(total: total) {
                            progress(.bytes(received: total, expected: expected, bytesPerSecond: rate))
                        }
                    },
                    rateLimiter: job.rateLimiter
                )
            }
            var delegate = makeDelegate()
            // The hop being fetched, so that a failure names the host and proxy it happened with.
            var hop = Hop(url: job.url, route: .direct)
            do {
                var visited: Set<String> = [job.url.absoluteString]
                var outcome: AttemptOutcome
                while true {
                    hop.route = try route(for: hop.url)
                    let request = try request(
                        for: hop.url, route: hop.route,
                        headers: DownloadEngine.hopHeaders(headers, adding: job.headers, from: job.url, to: hop.url))
                    let current = delegate
                    outcome = try await execute(
                        request, delegate: current, route: hop.route, received: { current.receivedBytes },
                        held: { current.limiterHeld })
                    guard case .redirect(let location) = outcome else { break }
                    // Range and If-Range go along: the validator still names the bytes on disk.
                    guard let next = URL(string: location, relativeTo: hop.url)?.absoluteURL,
                        ["http", "https"].contains(next.scheme?.lowercased() ?? "")
                    else {
                        throw NewsstandError(
                            .invalidURL, "\(job.url.absoluteString) redirected to an unusable URL: \(location)")
                    }
                    guard visited.count <= configuration.maxRedirects, visited.insert(next.absoluteString).inserted
                    else {
                        throw NewsstandError(
                            .tooManyRedirects, "\(job.url.absoluteString): too many redirects or a redirect loop")
                    }
                    hop.url = next
                    delegate = makeDelegate()
                }
                let (size, digest) = try await sink.drain()
                switch outcome {
                case .body(let expected):
                    if let expected, size != expected {
                        throw NewsstandError(
                            .lengthMismatch, "\(job.url.absoluteString) sent \(size) of \(expected) bytes")
                    }
                    try verify(job, digest: digest)
                    progress(.bytes(received: size, expected: size, bytesPerSecond: throttle.finalRate(total: size)))
                    return Result(
                        size: size, record: ResumeRecord.load(job.recordPath),
                        bytesFetched: fetched + delegate.receivedBytes)
                case .rangeNotSatisfiable(let total):
                    // Complete only if an earlier 200/206 announced exactly the bytes on disk: a `bytes */N`
                    // naming what we hold after a cut proves nothing, so it never overrides the recorded length.
                    if offset > 0, let known = record?.expectedBytes, known == offset, (total ?? known) == known {
                        try verify(job, digest: digest)
                        progress(.bytes(received: size, expected: size, bytesPerSecond: throttle.finalRate(total: size)))
                        return Result(size: size, record: record, bytesFetched: fetched + delegate.receivedBytes)
                    }
                    // Our bytes do not fit the resource any more: start over (the catch below truncates).
                    throw RangeMismatch(reason: "the server refused the range from byte \(offset) (416)")
                case .redirect(let location):
                    // Not reached: the loop above follows every redirect.
                    throw NewsstandError(
                        .tooManyRedirects, "\(job.url.absoluteString): the redirect to \(location) was not followed")
                }
            } catch let offer as SplitOffer {
                // The first response's connection is capped: its bytes stay, and the rest goes on in segments, or
                // (if they cannot be used) on this one connection from where it stopped.
                splitAbove = nil
                fetched += delegate.receivedBytes
                let kept = try await sink.drain().size
                let probe = Probe(
                    target: hop, total: offer.total, validator: offer.validator, etag: offer.etag,
                    lastModified: offer.lastModified, contentDisposition: offer.contentDisposition,
                    contentType: offer.contentType)
                if var result = try await fetchSegmented(job, known: probe, keeping: kept, progress: progress) {
                    result.bytesFetched += fetched
                    return result
                }
            } catch is CancellationError {
                // Let queued writes land before the asset lock is released, so nobody else's bytes follow them.
                _ = try? await sink.drain()
                throw CancellationError()
            } catch let error as NewsstandError where error.code == .checksumMismatch {
                try? await runBlocking {
                    try POSIX.unlinkIfPresent(job.partialPath)
                    try POSIX.unlinkIfPresent(job.recordPath)
                }
                throw error
            } catch {
                fetched += delegate.receivedBytes
                let drained = try? await sink.drain()
                if Task.isCancelled { throw CancellationError() }
                let classified = await DownloadEngine.classifyExplained(error, url: job.url, hop: hop)
                guard classified.isTransient else { throw classified.error }
                if let mismatch = error as? RangeMismatch {
                    logger.debug("restarting \(job.url.absoluteString) from zero: \(mismatch.reason)")
                    try await runBlocking { try sink.truncateNow() }
                }
                let reached = drained?.size ?? sink.size
                // A stalled attempt is a failed one even if it trickled a few new bytes.
                let madeProgress = reached > furthest && !(error is StallFailure)
                furthest = max(furthest, reached)
                try await backOff(
                    after: classified, of: error, madeProgress: madeProgress, failures: &failuresWithoutProgress,
                    progress: progress)
            }
        }
    }

    /// After a transient failure of an attempt (or of one range): gives up once the attempts in a row
    /// without progress reach the retry budget, else reports the retry and waits its backoff.
    /// - Throws: The final error, naming the attempts; `CancellationError` while waiting.
    func backOff(
        after classified: Classified, of error: any Error, madeProgress: Bool, failures: inout Int,
        progress: @Sendable (Progress) -> Void
    ) async throws {
        failures = madeProgress ? 0 : failures + 1
        if failures >= configuration.retry.maxAttemptsWithoutProgress {
            throw NewsstandError(
                classified.error.code, "\(classified.error.message) (gave up after \(failures) attempts without progress)",
                underlying: error, errno: classified.error.errno, httpStatus: classified.error.httpStatus)
        }
        let delay = configuration.retry.delay(
            attempt: max(failures, 1), retryAfter: classified.retryAfter, madeProgress: madeProgress)
        logger.debug("retry \(failures) in \(delay): \(classified.error.message)")
        progress(.retrying(attempt: failures, delay: delay, reason: classified.error.message))
        try await Task.sleep(for: delay)
    }

    func verify(_ job: Job, digest: String?) throws {
        guard let expected = job.sha256 else { return }
        guard let digest, digest == expected.lowercased() else {
            throw NewsstandError(
                .checksumMismatch,
                "\(job.url.absoluteString) has SHA-256 \(digest ?? "unknown"), expected \(expected); the bad file was deleted"
            )
        }
    }

    /// Runs one request under the stall watch (which reads `received`, and leaves out the time `held` says the
    /// request waited for the rate limiter), cancelled with the calling task.
    /// With the log at info level (`-v`), the request and its answer are logged (``RequestLog``).
    /// - Parameter separateConnections: HTTP/1.1 on a connection of its own, never a multiplexed HTTP/2 stream
    ///   (see ``client(for:separateConnections:)``).
    func execute<Delegate: HTTPClientResponseDelegate & Sendable>(
        _ request: HTTPClient.Request, delegate: Delegate, route: Route, separateConnections: Bool = false,
        received: @escaping @Sendable () -> Int64, held: (@Sendable () -> Duration)? = nil
    ) async throws -> Delegate.Response where Delegate.Response: Sendable {
        guard logger.logLevel <= .info else {
            return try await executeQuietly(
                request, delegate: delegate, route: route, separateConnections: separateConnections,
                received: received, held: held)
        }
        // A plain-http request through a proxy is addressed to the proxy; the log names the origin.
        var shown = request.url.absoluteString
        if case .forward = route, let host = request.headers.first(name: "Host") {
            shown = "http://\(host)\(request.url.path.isEmpty ? "/" : request.url.path)"
                + (request.url.query.map { "?\($0)" } ?? "")
        }
        let log = RequestLog(
            logger: logger, request: request, shownURL: shown, via: route.proxy.map { "\($0.host):\($0.port)" })
        do {
            let response = try await executeQuietly(
                request, delegate: LoggingDelegate(delegate, log: log), route: route,
                separateConnections: separateConnections, received: received, held: held)
            log.finished()
            return response
        } catch {
            log.finished(error: error)
            throw error
        }
    }

    private func executeQuietly<Delegate: HTTPClientResponseDelegate & Sendable>(
        _ request: HTTPClient.Request, delegate: Delegate, route: Route, separateConnections: Bool,
        received: @escaping @Sendable () -> Int64, held: (@Sendable () -> Duration)?
    ) async throws -> Delegate.Response where Delegate.Response: Sendable {
        // AsyncHTTPClient's own log (connection pool internals) only at trace level: `-vv` is about requests.
        var clientLogger = logger
        if logger.logLevel > .trace { clientLogger.logLevel = max(logger.logLevel, .warning) }
        let task = try await client(for: route, separateConnections: separateConnections).execute(
            request: request, delegate: delegate, logger: clientLogger)
        let watch = configuration.stallLimit.map { limit in
            StallWatch(limit: limit, received: received, held: held, stop: { task.cancel() })
        }
        defer { watch?.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            // The request was cancelled by the watch, not by the caller: say why.
            if let stalled = watch?.failure { throw stalled }
            throw error
        }
    }

    /// One request of an attempt (the asset's URL, or where it redirected to) and how it travelled.
    struct Hop: Sendable {
        var url: URL
        var route: Route
    }
}
