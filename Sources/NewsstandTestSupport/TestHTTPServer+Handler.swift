// Over 400 lines, one job: the channel handler that answers one request, with each fault applied
// where it strikes in the response.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

// One channel handler: every route and fault of the test server is a branch of its request handling,
// so they stay together; the bodies it streams are in TestHTTPServer+Body.swift.
internal import NewsstandCore  // HTTPDate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Answers the requests of one connection.
///
/// Everything here runs on the connection's event loop. Requests arrive one at a time: NIO's
/// pipelining handler holds back the next request until this one's `.end` is written. A body is
/// sent chunk by chunk, each chunk written only after the previous write completed, which gives
/// backpressure and flat memory; file chunks are read on the thread pool.
final class TestHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let chunkSize = 64 * 1024

    private let core: ServerCore
    private var requestHead: HTTPRequestHead?
    /// The file of the response in progress; closed when it ends or the connection goes away.
    private var openFile: OpenFile?

    init(core: ServerCore) {
        self.core = core
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestHead = head
        case .body:
            break  // GET and HEAD carry no body worth reading; others get 405 anyway.
        case .end:
            guard let head = requestHead else { return }
            requestHead = nil
            handle(context: context, head: head)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        releaseFile()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: - Routing

    private func handle(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let path = TestHTTPServer.normalize(head.uri)
        let request = RecordedRequest(
            method: head.method.rawValue,
            uri: head.uri,
            version: "HTTP/\(head.version.major).\(head.version.minor)",
            headers: head.headers.map { ($0.name, $0.value) }
        )
        switch core.route(path: path, request: request) {
        case .simple(let response):
            sendSimple(context: context, head: head, response: response)
        case .content(let content, let faults):
            let representation = Representation(
                size: Int64(content.bytes.readableBytes),
                etag: content.etag,
                lastModified: content.lastModified,
                contentType: content.contentType,
                source: .memory(content.bytes)
            )
            respond(context: context, head: head, path: path, representation: representation, faults: faults)
        case .file(let candidates, let faults):
            let opening = core.threadPool.runIfActive(eventLoop: context.eventLoop) {
                try OpenFile.openRegularFile(atAnyOf: candidates)
            }
            opening.assumeIsolated().whenComplete { result in
                switch result {
                case .success(let opened?):
                    guard context.channel.isActive else {
                        opened.file.close()
                        return
                    }
                    self.openFile = opened.file
                    let representation = Representation(
                        size: opened.size,
                        etag: HTTPSemantics.fileETag(
                            size: opened.size,
                            mtimeSeconds: opened.mtimeSeconds,
                            mtimeNanoseconds: opened.mtimeNanoseconds
                        ),
                        lastModified: opened.mtimeSeconds,
                        contentType: Self.contentType(forPath: path),
                        source: .file(opened.file)
                    )
                    self.respond(
                        context: context,
                        head: head,
                        path: path,
                        representation: representation,
                        faults: faults
                    )
                case .success(nil):
                    self.sendSimple(context: context, head: head, response: SimpleResponse(status: .notFound))
                case .failure:
                    // Only a stopped thread pool fails here: the server is shutting down.
                    context.close(promise: nil)
                }
            }
        }
    }

    // MARK: - Responses

    /// Answers with a status and a short text body (none for statuses that cannot have one).
    private func sendSimple(context: ChannelHandlerContext, head: HTTPRequestHead, response: SimpleResponse) {
        let keepAlive = head.isKeepAlive
        var headers = baseHeaders(keepAlive: keepAlive, version: head.version)
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        let code = response.status.code
        let mayHaveBody = code >= 200 && code != 204 && code != 304
        var body: ByteBuffer?
        if mayHaveBody {
            let text = response.text ?? "\(code) \(response.status.reasonPhrase)\n"
            let buffer = context.channel.allocator.buffer(string: text)
            headers.replaceOrAdd(name: "Content-Type", value: "text/plain; charset=utf-8")
            headers.replaceOrAdd(name: "Content-Length", value: String(buffer.readableBytes))
            body = buffer
        }
        context.write(
            wrapOutboundOut(
                .head(
                    HTTPResponseHead(version: responseVersion(head.version), status: response.status, headers: headers))
            ),
            promise: nil
        )
        // HEAD answers carry the same headers but never a body (the encoder would reject one).
        if let body, head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        finishResponse(context: context, keepAlive: keepAlive)
    }

    /// The headers of a representation as the faults shape them, with the validators it then has.
    private static func headers(
        of representation: Representation, faults: Faults
    ) -> (etag: String?, lastModified: Int64?, headers: HTTPHeaders) {
        let etag: String? =
            faults.omitValidators || faults.omitETag
            ? nil : (faults.weakETag ? "W/" + representation.etag : representation.etag)
        let lastModified: Int64? = faults.omitValidators ? nil : representation.lastModified

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: representation.contentType)
        if !faults.ignoreRange { headers.add(name: "Accept-Ranges", value: "bytes") }
        if let etag { headers.add(name: "ETag", value: etag) }
        if let lastModified { headers.add(name: "Last-Modified", value: HTTPDate.format(lastModified)) }
        if let disposition = faults.contentDisposition { headers.add(name: "Content-Disposition", value: disposition) }
        for (name, value) in faults.extraHeaders.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }

        return (etag, lastModified, headers)
    }

    /// Conditional GET (RFC 9110 §13.2.2): If-None-Match wins over If-Modified-Since.
    private static func isNotModified(_ head: HTTPRequestHead, etag: String?, lastModified: Int64?) -> Bool {
        if let ifNoneMatch = head.headers.first(name: "If-None-Match") {
            return HTTPSemantics.noneMatchMatches(ifNoneMatch, etag: etag)
        } else if let since = head.headers.first(name: "If-Modified-Since"), let lastModified,
            let sinceSeconds = HTTPDate.parse(since)
        {
            return lastModified <= sinceSeconds
        } else {
            return false
        }
    }

    /// Where the body stops and how it ends: whole, or cut short by a truncate, hold or cut fault (a cut only
    /// as often as the faults allow).
    private func bodyEnding(length: Int64, path: String, faults: Faults) -> (Int64, BodyStream.Ending) {
        var stopAfter = length
        var ending = BodyStream.Ending.complete
        if let truncate = faults.truncateAfterBytes, Int64(max(0, truncate)) < stopAfter {
            stopAfter = Int64(max(0, truncate))
            ending = .truncate
        }
        if let hold = faults.holdAfterBytes, Int64(max(0, hold)) < stopAfter {
            stopAfter = Int64(max(0, hold))
            ending = .hold
        }
        if let cut = faults.cutAfterBytes, Int64(max(0, cut)) < stopAfter,
            core.takeCut(path: path, faults: faults)
        {
            stopAfter = Int64(max(0, cut))
            ending = .cut(reset: faults.resetOnCut)
        }
        return (stopAfter, ending)
    }

    /// A 304 or 416: the representation's headers without its type and disposition (it sends no body), the file
    /// released.
    private func sendWithoutBody(
        _ status: HTTPResponseStatus, headers: HTTPHeaders, adding extra: (String, String)? = nil,
        context: ChannelHandlerContext, head: HTTPRequestHead
    ) {
        releaseFile()
        var headers = headers
        headers.remove(name: "Content-Type")
        headers.remove(name: "Content-Disposition")
        if let (name, value) = extra { headers.add(name: name, value: value) }
        sendSimple(
            context: context, head: head,
            response: SimpleResponse(status: status, headers: headers.map { ($0.name, $0.value) }))
    }

    /// Answers with (part of) a representation, honouring conditionals, Range and faults.
    private func respond(
        context: ChannelHandlerContext,
        head: HTTPRequestHead,
        path: String,
        representation: Representation,
        faults: Faults
    ) {
        var keepAlive = head.isKeepAlive
        let (etag, lastModified, representationHeaders) = Self.headers(of: representation, faults: faults)
        var headers = representationHeaders
        let size = representation.size

        if Self.isNotModified(head, etag: etag, lastModified: lastModified) {
            sendWithoutBody(.notModified, headers: headers, context: context, head: head)
            return
        }

        let decision: HTTPSemantics.RangeDecision =
            faults.ignoreRange
            ? .full
            : HTTPSemantics.rangeDecision(
                range: head.headers.first(name: "Range"),
                ifRange: faults.ignoreIfRange ? nil : head.headers.first(name: "If-Range"),
                size: size,
                etag: etag,
                lastModified: lastModified
            )

        let status: HTTPResponseStatus
        let offset: Int64
        let length: Int64
        switch decision {
        case .unsatisfiable:
            sendWithoutBody(
                .rangeNotSatisfiable, headers: headers, adding: ("Content-Range", "bytes */\(size)"), context: context,
                head: head)
            return
        case .full:
            status = .ok
            offset = 0
            length = size
        case .partial(let first, let last):
            status = .partialContent
            offset = first
            length = last - first + 1
            headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(size)")
        }

        if faults.omitContentLength {
            // HTTP/1.0 has no chunked coding: the body then ends with the connection.
            if head.version.major == 1 && head.version.minor == 0 { keepAlive = false }
        } else {
            headers.add(name: "Content-Length", value: String(length))
        }
        for (name, value) in baseHeaders(keepAlive: keepAlive, version: head.version) {
            headers.add(name: name, value: value)
        }
        context.write(
            wrapOutboundOut(
                .head(HTTPResponseHead(version: responseVersion(head.version), status: status, headers: headers))),
            promise: nil
        )

        if head.method == .HEAD {
            releaseFile()
            finishResponse(context: context, keepAlive: keepAlive)
            return
        }

        let (stopAfter, ending) = bodyEnding(length: length, path: path, faults: faults)
        let rate = faults.bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        // When throttled, about ten chunks a second keep the drip smooth.
        let chunkSize = rate.map { max(1, min(Self.chunkSize, $0 / 10)) } ?? Self.chunkSize
        let stream = BodyStream(
            path: path,
            source: representation.source,
            offset: offset,
            stopAfter: stopAfter,
            ending: ending,
            chunkSize: chunkSize,
            bytesPerSecond: rate,
            keepAlive: keepAlive,
            started: .now()
        )
        sendNextChunk(context: context, stream: stream)
    }

    /// Sends one chunk, then schedules the next (at once, or later when throttled).
    private func sendNextChunk(context: ChannelHandlerContext, stream: BodyStream) {
        if stream.sent >= stream.stopAfter {
            endBody(context: context, stream: stream)
            return
        }
        let count = Int(min(Int64(stream.chunkSize), stream.stopAfter - stream.sent))
        let pending =
            stream.prefetched ?? readChunk(stream: stream, at: stream.sent, count: count, eventLoop: context.eventLoop)
        stream.prefetched = nil
        pending.assumeIsolated().whenComplete { result in
            guard case .success(let chunk) = result else {
                self.abort(context: context)
                return
            }
            // Read the next chunk from disk while this one is written (at most two in memory);
            // throttled bodies have time enough and do not need it.
            let next = stream.sent + Int64(count)
            if case .file = stream.source, stream.bytesPerSecond == nil, next < stream.stopAfter {
                let nextCount = Int(min(Int64(stream.chunkSize), stream.stopAfter - next))
                stream.prefetched = self.readChunk(
                    stream: stream, at: next, count: nextCount, eventLoop: context.eventLoop)
            }
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(chunk)))).assumeIsolated().whenComplete {
                written in
                guard case .success = written else {
                    self.abort(context: context)
                    return
                }
                self.core.addBodyBytes(path: stream.path, count: count)
                stream.sent += Int64(count)
                let loop = context.eventLoop.assumeIsolated()
                if let rate = stream.bytesPerSecond {
                    // Pace by total bytes so far, so timer slack does not add up over chunks
                    // (in Double: bytes times 10^9 would overflow Int64 past about 9 GB).
                    let due = stream.started + .nanoseconds(Int64(Double(stream.sent) / Double(rate) * 1e9))
                    loop.scheduleTask(deadline: due) { self.sendNextChunk(context: context, stream: stream) }
                } else {
                    // A fresh event-loop turn rather than recursion: writes can complete at once.
                    loop.execute { self.sendNextChunk(context: context, stream: stream) }
                }
            }
        }
    }

    /// Reads `count` body bytes starting `bodyOffset` bytes into this response's body.
    private func readChunk(
        stream: BodyStream,
        at bodyOffset: Int64,
        count: Int,
        eventLoop: any EventLoop
    ) -> EventLoopFuture<ByteBuffer> {
        let position = stream.offset + bodyOffset
        switch stream.source {
        case .memory(let buffer):
            // A slice shares storage with the stored content: no copy.
            guard let slice = buffer.getSlice(at: buffer.readerIndex + Int(position), length: count) else {
                return eventLoop.makeFailedFuture(TestHTTPServerError.fileShrank)
            }
            return eventLoop.makeSucceededFuture(slice)
        case .file(let file):
            let allocator = core.allocator
            return core.threadPool.runIfActive(eventLoop: eventLoop) {
                try file.read(at: position, count: count, allocator: allocator)
            }
        }
    }

    private func endBody(context: ChannelHandlerContext, stream: BodyStream) {
        releaseFile()
        switch stream.ending {
        case .complete:
            finishResponse(context: context, keepAlive: stream.keepAlive)
        case .truncate:
            context.close(promise: nil)
        case .hold:
            break
        case .cut(let reset):
            if reset, let options = context.channel as? any SocketOptionProvider {
                // SO_LINGER with a zero timeout turns the close into a TCP reset.
                options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            } else {
                context.close(promise: nil)
            }
        }
    }

    /// Writes `.end`; closes afterwards unless the connection is kept alive.
    private func finishResponse(context: ChannelHandlerContext, keepAlive: Bool) {
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private func abort(context: ChannelHandlerContext) {
        releaseFile()
        context.close(promise: nil)
    }

    private func releaseFile() {
        openFile?.close()
        openFile = nil
    }

    private func baseHeaders(keepAlive: Bool, version: HTTPVersion) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Date", value: HTTPDate.format(Int64(Date().timeIntervalSince1970)))
        headers.add(name: "Server", value: "NewsstandTestServer")
        // HTTP/2 has no connection header fields (RFC 9113 §8.2.2): a stream just ends.
        if version.major >= 2 { return headers }
        if !keepAlive {
            headers.add(name: "Connection", value: "close")
        } else if version.major == 1 && version.minor == 0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        return headers
    }

    /// HTTP/1.0 clients get 1.0 answers, so that NIO never chunks a body they cannot parse.
    private func responseVersion(_ requestVersion: HTTPVersion) -> HTTPVersion {
        if requestVersion.major >= 2 { return requestVersion }
        return requestVersion.major == 1 && requestVersion.minor == 0 ? .http1_0 : .http1_1
    }

    private static func contentType(forPath path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "txt": "text/plain; charset=utf-8"
        case "json": "application/json"
        case "html", "htm": "text/html; charset=utf-8"
        case "zip": "application/zip"
        case "gz", "tgz": "application/gzip"
        case "tar": "application/x-tar"
        case "pdf": "application/pdf"
        case "epub": "application/epub+zip"
        default: "application/octet-stream"
        }
    }
}
