import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

// Over 400 lines, one job: the server's public face (start, content, faults, counters) and the state
// its handler shares; the handler, bodies and faults are in TestHTTPServer+*.swift.

/// A real HTTP/1.1 server on 127.0.0.1 for tests, with fault injection; with TLS it may also offer
/// HTTP/2 (ALPN `h2`), each stream answered by the same handler.
///
/// It serves in-memory content (``serve(_:bytes:etag:lastModified:contentType:)``) and files
/// under directories (``serveDirectory(_:)``) for `GET` and `HEAD`, with single byte ranges,
/// `If-Range`, `If-None-Match` and `If-Modified-Since`, keep-alive, and the faults of ``Faults``.
/// Bodies stream in chunks of about 64 KiB, each written only after the previous one reached the
/// kernel, so memory stays flat whatever the size.
///
/// Paths given to its methods are URL paths (`"/a.bin"`); a query string is ignored and
/// percent-escapes are decoded, so `"/a%20b"` and `"/a b"` name the same path. Counters and faults
/// are kept per such path.
///
/// Always call ``shutdown()`` (or use ``withTestServer(_:)``): the server owns threads.
public final class TestHTTPServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `"https"` when started with TLS, else `"http"`.
    public let scheme: String

    let core: ServerCore
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// Whether ``shutdown()`` has begun; makes it idempotent.
    private let stopped = Mutex(false)

    private init(
        port: Int, scheme: String, core: ServerCore, group: MultiThreadedEventLoopGroup, channel: any Channel
    ) {
        self.port = port
        self.scheme = scheme
        self.core = core
        self.group = group
        self.channel = channel
    }

    /// Starts on 127.0.0.1, port 0 (ephemeral) unless given; with `tls`, it speaks HTTPS.
    /// - Parameter http2: With `tls`, offer HTTP/2 in the handshake (ALPN `h2`, then `http/1.1`), as nginx's
    ///   `listen … ssl http2` does: a client that picks `h2` gets HTTP/2 (each stream's request is recorded
    ///   with version `HTTP/2.0`), any other client HTTP/1.1. Without it the server offers no protocol and
    ///   every client speaks HTTP/1.1.
    public static func start(port: Int = 0, tls: TLSConfiguration? = nil, http2: Bool = false) async throws
        -> TestHTTPServer
    {
        var tls = tls
        if http2 { tls?.applicationProtocols = ["h2", "http/1.1"] }
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let offersHTTP2 = http2 && sslContext != nil
        // One event loop is plenty for tests; file reads go to the thread pool, never the loop.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        let core = ServerCore(threadPool: threadPool)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 256)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    if offersHTTP2, let sslContext {
                        return channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                        }.flatMap {
                            channel.configureHTTP2SecureUpgrade(
                                h2ChannelConfigurator: { connection in
                                    connection.configureHTTP2Pipeline(mode: .server) { stream in
                                        stream.eventLoop.makeCompletedFuture {
                                            try stream.pipeline.syncOperations.addHandler(
                                                HTTP2FramePayloadToHTTP1ServerCodec())
                                            try stream.pipeline.syncOperations.addHandler(TestHTTPHandler(core: core))
                                        }
                                    }.map { _ in }
                                },
                                http1ChannelConfigurator: { connection in
                                    connection.eventLoop.makeCompletedFuture {
                                        try connection.pipeline.syncOperations.configureHTTPServerPipeline(
                                            withErrorHandling: true)
                                        try connection.pipeline.syncOperations.addHandler(TestHTTPHandler(core: core))
                                    }
                                })
                        }
                    }
                    return channel.eventLoop.makeCompletedFuture {
                        if let sslContext {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                        }
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(TestHTTPHandler(core: core))
                    }
                }
                .bind(host: "127.0.0.1", port: port)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                throw TestHTTPServerError.noLocalAddress
            }
            return TestHTTPServer(
                port: boundPort, scheme: tls == nil ? "http" : "https", core: core, group: group, channel: channel)
        } catch {
            // Shutdown errors would hide the bind error, which is the one worth reporting.
            try? await threadPool.shutdownGracefully()
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `"http://127.0.0.1:PORT"` (`https` with TLS).
    public var baseURL: String {
        "\(scheme)://127.0.0.1:\(port)"
    }

    /// ``baseURL`` followed by `path` (a leading `/` is added if missing). The path is used as
    /// given, so it must already be URL-safe (percent-encoded).
    public func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// Serve in-memory bytes at `path`.
    ///
    /// - Parameters:
    ///   - etag: the full ETag including quotes; defaults to a strong ETag derived from the bytes
    ///     (`"` + 16 hex digits of an FNV-1a hash + `"`), so new content gets a new ETag.
    ///   - lastModified: defaults to a fixed date, Mon, 01 Jan 2024 00:00:00 GMT (whole seconds
    ///     are used, as HTTP-dates have no fractions).
    ///
    /// Calling again replaces the content (to simulate "content changed between requests").
    public func serve(
        _ path: String,
        bytes: [UInt8],
        etag: String? = nil,
        lastModified: Date? = nil,
        contentType: String = "application/octet-stream"
    ) {
        var buffer = core.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let content = StoredContent(
            bytes: buffer,
            etag: etag ?? HTTPSemantics.contentETag(bytes),
            lastModified: lastModified.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
                ?? Self.defaultLastModified,
            contentType: contentType
        )
        let key = Self.normalize(path)
        core.state.withLock { $0.contents[key] = content }
    }

    /// Serve every regular file under `directory` at `"/<relative path>"`.
    ///
    /// Files are opened on each request and streamed in chunks from a thread pool, never loaded
    /// whole. The ETag comes from size and modification time; `Last-Modified` is the
    /// modification time. In-memory content from ``serve(_:bytes:etag:lastModified:contentType:)``
    /// wins over files; with several directories the first one holding the file wins. Paths with
    /// `..` segments get 404.
    public func serveDirectory(_ directory: String) {
        let absolute = URL(fileURLWithPath: directory).standardizedFileURL.path
        core.state.withLock { $0.directories.append(absolute) }
    }

    /// Accepts requests for `path` only with `?sig=<valid>` (others get 403), like a CDN's signed link.
    /// With `expiresOnCutTo`, the link expires when a cut fault of the path fires: from then on only
    /// that new signature is accepted.
    public func requireSignature(_ path: String, valid: String, expiresOnCutTo next: String? = nil) {
        let key = Self.normalize(path)
        core.state.withLock { $0.signatures[key] = (valid, next) }
    }

    /// Replaces the faults of `path` and restarts its counted faults from zero.
    public func setFaults(_ path: String, _ faults: Faults) {
        let key = Self.normalize(path)
        core.state.withLock {
            $0.faults[key] = faults
            $0.progress[key] = FaultProgress()
        }
    }

    /// Faults for every path that has none of its own from ``setFaults(_:_:)`` (counted faults
    /// are still counted per path). Restarts the counts of those paths.
    public func setDefaultFaults(_ faults: Faults) {
        core.state.withLock { state in
            state.defaultFaults = faults
            for key in state.progress.keys where state.faults[key] == nil {
                state.progress[key] = FaultProgress()
            }
        }
    }

    /// Total body bytes written for `path` over all requests.
    ///
    /// Counts bytes of the path's content (200 and 206 bodies) whose write completed, that is,
    /// bytes handed to the kernel's socket buffer; short texts of error, redirect and status
    /// responses are not counted. A client that disconnects may not have read all of them.
    public func bodyBytesSent(_ path: String) -> Int {
        let key = Self.normalize(path)
        return core.state.withLock { $0.stats[key]?.bodyBytes ?? 0 }
    }

    /// How many requests arrived for `path` (whatever was answered).
    public func requestCount(_ path: String) -> Int {
        let key = Self.normalize(path)
        return core.state.withLock { $0.stats[key]?.requests.count ?? 0 }
    }

    /// The requests for `path`, in arrival order.
    public func requests(_ path: String) -> [RecordedRequest] {
        let key = Self.normalize(path)
        return core.state.withLock { $0.stats[key]?.requests ?? [] }
    }

    /// Forgets all requests and body byte counts. Fault counts are kept, so a cut that already
    /// happened does not happen again (use ``setFaults(_:_:)`` to re-arm faults).
    public func resetCounters() {
        core.state.withLock { $0.stats = [:] }
    }

    /// Stops listening, closes every connection and releases the threads. Idempotent: later
    /// calls return at once.
    public func shutdown() async throws {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return }
        // Closing the listener first stops new connections; an already-closed channel is fine.
        try? await channel.close()
        // The pool goes before the loop so that pending reads fail on a loop that still runs.
        try await core.threadPool.shutdownGracefully()
        try await group.shutdownGracefully()
    }

    /// Mon, 01 Jan 2024 00:00:00 GMT: fixed so that tests can compare `Last-Modified` values.
    static let defaultLastModified: Int64 = 1_704_067_200

    /// The key under which a URL path is stored: without query or fragment, percent-decoded,
    /// with a leading `/`.
    static func normalize(_ path: String) -> String {
        var path = Substring(path)
        // Absolute form (`GET http://host/path`), as clients send it to a proxy (RFC 9112 §3.2.2).
        for scheme in ["http://", "https://"] where path.lowercased().hasPrefix(scheme) {
            let rest = path.dropFirst(scheme.count)
            path = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
        }
        let raw = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let withoutFragment = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let decoded = String(withoutFragment).removingPercentEncoding ?? String(withoutFragment)
        return decoded.hasPrefix("/") ? decoded : "/" + decoded
    }
}

/// Runs body with a started server (HTTPS with `tls`, offering HTTP/2 with `http2`) and always shuts it
/// down (also on throw).
public func withTestServer<T: Sendable>(
    tls: TLSConfiguration? = nil, http2: Bool = false, _ body: (TestHTTPServer) async throws -> T
) async throws -> T {
    let server = try await TestHTTPServer.start(tls: tls, http2: http2)
    let result: T
    do {
        result = try await body(server)
    } catch {
        // The body's error is the one worth reporting; a shutdown failure would only mask it.
        try? await server.shutdown()
        throw error
    }
    try await server.shutdown()
    return result
}

/// One request as the server received it.
///
/// Headers are kept as `(name, value)` pairs in arrival order with the names spelled as sent;
/// use ``header(_:)`` for a case-insensitive look-up.
public struct RecordedRequest: Sendable {
    /// The method, e.g. `"GET"`.
    public var method: String
    /// The request target as sent, e.g. `"/a.bin?x=1"`.
    public var uri: String
    /// The HTTP version, e.g. `"HTTP/1.1"`.
    public var version: String
    /// Every header field in arrival order, names as sent.
    public var headers: [(String, String)]
    /// When the request's head arrived: what a test of request pacing compares.
    public var receivedAt: ContinuousClock.Instant

    /// Creates a record (the server makes these; public for tests that build expectations).
    public init(
        method: String, uri: String, version: String = "HTTP/1.1", headers: [(String, String)],
        receivedAt: ContinuousClock.Instant = .now
    ) {
        self.method = method
        self.uri = uri
        self.version = version
        self.headers = headers
        self.receivedAt = receivedAt
    }

    /// The value of header `name` (case-insensitive); several fields of that name are joined with
    /// `", "` as RFC 9110 §5.3 allows. Nil when absent.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        let values = headers.filter { $0.0.lowercased() == wanted }.map(\.1)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

/// Errors the test server itself throws.
public enum TestHTTPServerError: Error, Sendable {
    /// The listening socket reported no local address.
    case noLocalAddress
    /// A served file ended before its announced size (it shrank while being served).
    case fileShrank
    /// A served file was already closed (its connection went away).
    case fileClosed
    /// A system call failed with this errno.
    case systemCall(String, errno: Int32)
}
