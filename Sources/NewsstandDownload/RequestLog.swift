import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import NewsstandCore

/// The trace `-v` shows: one line when a request goes out (method, URL with credentials hidden, the
/// validators sent) and one when it ends (status, validators received, where a redirect points, bytes and
/// time). At debug level (`-vv`) the ranges asked for and answered are added. Header values that are
/// secrets never appear: only the validators and ranges are printed, and URLs pass through
/// ``URLCredentials/redactSecrets(_:)`` (passwords and token-like query values masked).
final class RequestLog: Sendable {
    private let logger: Logger
    private let url: String
    private let started = ContinuousClock.now
    private let head = Mutex<HTTPResponseHead?>(nil)
    private let bytes = Atomic<Int64>(0)

    /// Logs the request's line. `shownURL` is the URL the request is for (for a proxied plain-http request,
    /// the origin's, not the proxy's).
    init(logger: Logger, request: HTTPClient.Request, shownURL: String, via proxy: String?) {
        self.logger = logger
        self.url = URLCredentials.redactSecrets(shownURL)
        var line = "\(request.method.rawValue) \(url)"
        if let proxy { line += " via proxy \(URLCredentials.redactSecrets(proxy))" }
        for name in ["If-None-Match", "If-Modified-Since", "If-Range"] {
            if let value = request.headers.first(name: name) { line += " \(name): \(value)" }
        }
        if logger.logLevel <= .debug, let range = request.headers.first(name: "Range") { line += " Range: \(range)" }
        logger.info("\(line)")
    }

    func received(_ head: HTTPResponseHead) {
        self.head.withLock { $0 = head }
    }

    func receivedBody(_ count: Int) {
        bytes.add(Int64(count), ordering: .relaxed)
    }

    /// Logs how the request ended: its status line, or the error.
    func finished(error: (any Error)? = nil) {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let count = bytes.load(ordering: .relaxed)
        let time = String(format: "%.3f s", seconds)
        guard let head = head.withLock({ $0 }) else {
            logger.info("\(url): no answer after \(time): \(error.map { URLCredentials.redactSecrets("\($0)") } ?? "closed")")
            return
        }
        var line = "\(head.status.code) \(head.status.reasonPhrase) \(url) \(count) bytes in \(time)"
        for name in ["ETag", "Last-Modified"] {
            if let value = head.headers.first(name: name) { line += " \(name): \(value)" }
        }
        if let location = head.headers.first(name: "Location") { line += " → \(URLCredentials.redactSecrets(location))" }
        if logger.logLevel <= .debug, let range = head.headers.first(name: "Content-Range") {
            line += " Content-Range: \(range)"
        }
        if let error, !(error is CancellationError) { line += " (then: \(URLCredentials.redactSecrets("\(error)")))" }
        logger.info("\(line)")
    }
}

/// Passes every callback on to the delegate doing the work, noting the response head and body bytes in a
/// ``RequestLog`` on the way. Only made when the log is on, so a quiet run's body parts take no detour.
final class LoggingDelegate<Inner: HTTPClientResponseDelegate & Sendable>: HTTPClientResponseDelegate, Sendable {
    typealias Response = Inner.Response
    let inner: Inner
    let log: RequestLog

    init(_ inner: Inner, log: RequestLog) {
        self.inner = inner
        self.log = log
    }

    func didSendRequestHead(task: HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        inner.didSendRequestHead(task: task, head)
    }

    func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
        inner.didSendRequestPart(task: task, part)
    }

    func didSendRequest(task: HTTPClient.Task<Response>) {
        inner.didSendRequest(task: task)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        log.received(head)
        return inner.didReceiveHead(task: task, head)
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        log.receivedBody(buffer.readableBytes)
        return inner.didReceiveBodyPart(task: task, buffer)
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {
        inner.didReceiveError(task: task, error)
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try inner.didFinishRequest(task: task)
    }

    func didVisitURL(task: HTTPClient.Task<Response>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        inner.didVisitURL(task: task, request, head)
    }
}
