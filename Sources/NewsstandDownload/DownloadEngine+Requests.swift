import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
import NewsstandCore

/// How one request of the engine travels: its route (direct or through a proxy), the client for that
/// route, the request itself with its credentials and headers, and its run under the stall watch.
extension DownloadEngine {
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

    func tlsConfiguration() async throws -> TLSConfiguration {
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
}
