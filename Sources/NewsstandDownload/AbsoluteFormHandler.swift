import NIOCore
import NIOHTTP1

/// Turns each request line into absolute form, `GET http://host/path HTTP/1.1`, as a forward proxy
/// expects plain-http requests (RFC 9112 §3.2.2).
///
/// AsyncHTTPClient 1.37 tunnels every request through its configured proxy with `CONNECT`, which
/// proxies commonly allow to port 443 only. So for plain http the engine instead sends the request to
/// the proxy's own address, with the origin in `Host`, and this handler (placed just above AHC's request
/// encoder) rewrites the origin-form target AHC wrote. Everything else (pooling, streaming, back-pressure,
/// timeouts) stays AHC's.
final class AbsoluteFormHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), head.uri.hasPrefix("/"),
            let host = head.headers.first(name: "host")
        else {
            context.write(data, promise: promise)
            return
        }
        head.uri = "http://\(host)\(head.uri)"
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }

    /// Adds the handler to an AHC HTTP/1 connection's pipeline. Must run on the channel's event loop.
    static func install(on channel: any Channel) throws {
        let sync = channel.pipeline.syncOperations
        let encoder = try sync.handler(type: HTTPRequestEncoder.self)
        // Outbound data flows towards the head, so "after the encoder" sees AHC's parts first.
        try sync.addHandler(AbsoluteFormHandler(), position: .after(encoder))
    }
}
