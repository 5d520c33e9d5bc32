import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP server on 127.0.0.1 that takes webhook POSTs: it records each request's headers and body
/// and answers the statuses queued with ``answer(_:)`` in turn (200 once they run out).
public final class TestWebhookReceiver: Sendable {
    /// One request as received.
    public struct Delivery: Sendable {
        public var headers: [(String, String)]
        public var body: [UInt8]
        public var status: Int

        /// The first value of a header, by case-insensitive name.
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    private struct State {
        var statuses: [Int] = []
        var deliveries: [Delivery] = []
    }
    private let state = Mutex(State())
    private let channel: any Channel
    public let port: Int

    public var url: String { "http://127.0.0.1:\(port)/hook" }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    public static func start() async throws -> TestWebhookReceiver {
        let box = Mutex<TestWebhookReceiver?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler { box.withLock { $0 } })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let receiver = TestWebhookReceiver(channel: channel, port: channel.localAddress?.port ?? 0)
        box.withLock { $0 = receiver }
        return receiver
    }

    /// Queues the statuses of the next answers.
    public func answer(_ statuses: [Int]) {
        state.withLock { $0.statuses += statuses }
    }

    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    fileprivate func receive(headers: [(String, String)], body: [UInt8]) -> Int {
        state.withLock { state in
            let status = state.statuses.isEmpty ? 200 : state.statuses.removeFirst()
            state.deliveries.append(Delivery(headers: headers, body: body, status: status))
            return status
        }
    }

    public func shutdown() async throws {
        try await channel.close()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        // Used on its channel's event loop only (NIO's handler contract), hence unchecked.
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let receiver: @Sendable () -> TestWebhookReceiver?
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(_ receiver: @escaping @Sendable () -> TestWebhookReceiver?) { self.receiver = receiver }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(var buffer):
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                let headers = head.map { $0.headers.map { ($0.name, $0.value) } } ?? []
                let status = receiver()?.receive(headers: headers, body: body) ?? 500
                var responseHeaders = HTTPHeaders()
                responseHeaders.add(name: "Content-Length", value: "0")
                let response = HTTPResponseHead(
                    version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: responseHeaders)
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
