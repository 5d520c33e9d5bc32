import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP forward proxy on 127.0.0.1 for tests, behaving as squid does by default.
///
/// - Absolute-form requests (`GET http://host:port/path`) are forwarded to the origin in origin
///   form and the response relayed back.
/// - `CONNECT host:port` opens a byte tunnel, but only to ports in ``Options/allowedConnectPorts``
///   (443 unless changed); other ports get `403 Forbidden`.
/// - With ``Options/credentials``, a request without the matching `Proxy-Authorization: Basic`
///   gets `407 Proxy Authentication Required`.
/// - ``Options/upstream`` sends every connection to one address whatever host was named, so a test
///   can use a name that does not resolve and so could only be reached through the proxy.
///
/// Every request is recorded (``requests``). Always call ``shutdown()`` (or use ``withTestProxy(_:_:)``).
public final class TestForwardProxy: Sendable {
    public struct Options: Sendable {
        public var allowedConnectPorts: Set<Int>
        public var credentials: (username: String, password: String)?
        public var upstream: (host: String, port: Int)?

        public init(
            allowedConnectPorts: Set<Int> = [443], credentials: (username: String, password: String)? = nil,
            upstream: (host: String, port: Int)? = nil
        ) {
            self.allowedConnectPorts = allowedConnectPorts
            self.credentials = credentials
            self.upstream = upstream
        }
    }

    /// One request as the proxy received it, and what it answered.
    public struct Request: Sendable, Hashable {
        public var method: String
        /// The request target: `http://host/path` (absolute form) or `host:port` (CONNECT).
        public var target: String
        public var proxyAuthorization: String?
        /// The status the proxy itself answered (200 for a tunnel or a forwarded request, 403, 407, 502).
        public var status: Int
    }

    /// The port the proxy listens on.
    public let port: Int
    let state: Mutex<[Request]>
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.state = Mutex([])
        self.group = group
        self.channel = channel
    }

    /// Starts on 127.0.0.1, on an ephemeral port.
    public static func start(_ options: Options = Options()) async throws -> TestForwardProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = Box()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let encoder = HTTPResponseEncoder()
                        let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(encoder)
                        try sync.addHandler(decoder)
                        try sync.addHandler(
                            ProxyHandler(options: options, log: log, encoder: encoder, decoder: decoder))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw TestHTTPServerError.noLocalAddress }
            let proxy = TestForwardProxy(port: port, group: group, channel: channel)
            log.proxy.withLock { $0 = proxy }
            return proxy
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `http://127.0.0.1:PORT`, or with credentials `http://USER:PASSWORD@127.0.0.1:PORT` (percent-encoded).
    public func url(username: String? = nil, password: String? = nil) -> String {
        guard let username else { return "http://127.0.0.1:\(port)" }
        let allowed = CharacterSet.alphanumerics
        let user = username.addingPercentEncoding(withAllowedCharacters: allowed) ?? username
        let pass = (password ?? "").addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        return "http://\(user):\(pass)@127.0.0.1:\(port)"
    }

    /// The requests received so far, in arrival order.
    public var requests: [Request] { state.withLock { $0 } }

    public func shutdown() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }

    /// Where handlers record requests (the proxy object exists only once the listener is bound).
    final class Box: Sendable {
        let proxy = Mutex<TestForwardProxy?>(nil)
        func record(_ request: Request) {
            proxy.withLock { $0?.state.withLock { $0.append(request) } }
        }
    }
}

/// Runs body with a started proxy and always shuts it down.
public func withTestProxy<T: Sendable>(
    _ options: TestForwardProxy.Options = .init(), _ body: (TestForwardProxy) async throws -> T
) async throws -> T {
    let proxy = try await TestForwardProxy.start(options)
    let result: T
    do {
        result = try await body(proxy)
    } catch {
        try? await proxy.shutdown()
        throw error
    }
    try await proxy.shutdown()
    return result
}

/// One client connection of the proxy: reads a request head, then forwards it or opens a tunnel.
private final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let options: TestForwardProxy.Options
    private let log: TestForwardProxy.Box
    private let encoder: HTTPResponseEncoder
    private let decoder: ByteToMessageHandler<HTTPRequestDecoder>
    /// The upstream connection of the request being forwarded; parts wait here until it is open.
    private var upstream: (any Channel)?
    private var pending: [HTTPClientRequestPart] = []
    /// True after this request was answered by the proxy itself; its remaining parts are dropped.
    private var answered = false

    init(
        options: TestForwardProxy.Options, log: TestForwardProxy.Box, encoder: HTTPResponseEncoder,
        decoder: ByteToMessageHandler<HTTPRequestDecoder>
    ) {
        self.options = options
        self.log = log
        self.encoder = encoder
        self.decoder = decoder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // A new request on this connection: the previous one's origin connection is done with.
            answered = false
            upstream = nil
            pending = []
            let authorization = head.headers.first(name: "proxy-authorization")
            func record(_ status: Int) {
                log.record(
                    .init(
                        method: head.method.rawValue, target: head.uri, proxyAuthorization: authorization,
                        status: status))
            }
            if let credentials = options.credentials {
                let expected =
                    "Basic " + Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
                guard authorization == expected else {
                    record(407)
                    answer(
                        context, .proxyAuthenticationRequired, headers: [("Proxy-Authenticate", "Basic realm=\"test\"")]
                    )
                    return
                }
            }
            if head.method == .CONNECT {
                connect(context, head, record: record)
            } else {
                forward(context, head, record: record)
            }
        case .body(let body):
            send(.body(.byteBuffer(body)))
        case .end(let trailers):
            send(.end(trailers))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.close(promise: nil)
        context.fireChannelInactive()
    }

    private func send(_ part: HTTPClientRequestPart) {
        guard !answered else { return }
        if let upstream {
            upstream.writeAndFlush(part, promise: nil)
        } else {
            pending.append(part)
        }
    }

    /// Answers with an empty body; 407 and errors keep the connection open (clients may retry on it).
    private func answer(
        _ context: ChannelHandlerContext, _ status: HTTPResponseStatus, headers: [(String, String)] = [],
        close: Bool = false
    ) {
        answered = true
        var head = HTTPResponseHead(version: .http1_1, status: status)
        head.headers.add(name: "Content-Length", value: "0")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if close { head.headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close { done.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
    }

    private func endpoint(host: String?, port: Int) -> (host: String, port: Int) {
        options.upstream ?? (host ?? "127.0.0.1", port)
    }

    private func connect(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, record: (Int) -> Void) {
        let parts = head.uri.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else {
            record(400)
            answer(context, .badRequest, close: true)
            return
        }
        guard options.allowedConnectPorts.contains(port) else {
            record(403)
            answer(context, .forbidden, close: true)
            return
        }
        let target = endpoint(host: String(parts[0]), port: port)
        let client = context.channel
        let connected = ClientBootstrap(group: context.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TunnelRelay(partner: client))
                }
            }
            .connect(host: target.host, port: target.port)
        let method = head.method.rawValue
        let uri = head.uri
        let authorization = head.headers.first(name: "proxy-authorization")
        let log = self.log
        connected.assumeIsolated().whenComplete { result in
            switch result {
            case .failure:
                log.record(.init(method: method, target: uri, proxyAuthorization: authorization, status: 502))
                self.answer(context, .badGateway, close: true)
            case .success(let upstream):
                log.record(.init(method: method, target: uri, proxyAuthorization: authorization, status: 200))
                self.upstream = upstream
                // From here on the connection carries raw bytes. The 200 goes out raw too: NIO's encoder
                // would frame it as chunked, and a CONNECT answer has no body. This handler leaves first,
                // so the bytes the decoder already read reach the relay, never this handler.
                let channel = context.channel
                let sync = channel.pipeline.syncOperations
                do {
                    sync.removeHandler(context: context, promise: nil)
                    sync.removeHandler(self.encoder, promise: nil)
                    try sync.addHandler(TunnelRelay(partner: upstream))
                    channel.writeAndFlush(
                        ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n"), promise: nil)
                    sync.removeHandler(self.decoder, promise: nil)
                } catch {
                    channel.close(promise: nil)
                }
            }
        }
    }

    private func forward(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, record: (Int) -> Void) {
        guard let url = URL(string: head.uri), url.scheme == "http", let host = url.host else {
            // Origin form (`GET /path`) is for servers, not proxies.
            record(400)
            answer(context, .badRequest)
            return
        }
        record(200)
        var origin = head
        let query = url.query.map { "?" + $0 } ?? ""
        origin.uri = (url.path.isEmpty ? "/" : url.path) + query
        if let encoded = URLComponents(string: head.uri)?.percentEncodedPath, !encoded.isEmpty {
            origin.uri = encoded + query
        }
        origin.headers.remove(name: "proxy-authorization")
        origin.headers.remove(name: "proxy-connection")
        origin.headers.replaceOrAdd(name: "connection", value: "close")
        pending = [.head(origin)]
        let target = endpoint(host: host, port: url.port ?? 80)
        let client = context.channel
        let connected = ClientBootstrap(group: context.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseRelay(client: client))
                }
            }
            .connect(host: target.host, port: target.port)
        connected.assumeIsolated().whenComplete { result in
            switch result {
            case .failure:
                self.answer(context, .badGateway, close: true)
            case .success(let upstream):
                self.upstream = upstream
                for part in self.pending { upstream.write(part, promise: nil) }
                upstream.flush()
                self.pending = []
            }
        }
    }
}

/// Relays an origin's response to the proxy's client, then closes the origin connection.
private final class ResponseRelay: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let client: any Channel
    private var complete = false

    init(client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            // The origin closes after this response; the client's connection to the proxy stays open.
            head.headers.remove(name: "connection")
            client.write(HTTPServerResponsePart.head(head), promise: nil)
        case .body(let body):
            client.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil)
        case .end(let trailers):
            complete = true
            client.writeAndFlush(HTTPServerResponsePart.end(trailers), promise: nil)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A body cut short by the origin is cut short for the client too, as by a real proxy.
        if !complete { client.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// One direction of a CONNECT tunnel: bytes read here are written to the partner connection.
private final class TunnelRelay: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
