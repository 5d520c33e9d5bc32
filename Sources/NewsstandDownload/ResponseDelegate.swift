import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import NewsstandCore

/// What one HTTP attempt ended with.
enum AttemptOutcome: Sendable {
    /// A 200 or 206 body was written to the partial file.
    case body(expectedTotal: Int64?)
    /// 416: the server says the range starts at or past the end; `total` from `Content-Range: bytes */N`.
    case rangeNotSatisfiable(total: Int64?)
    /// 301, 302, 303, 307 or 308 with a `Location`; the engine follows it (its body is dropped).
    case redirect(location: String)
}

/// A response status that ends an attempt; 408, 429 and 5xx are worth retrying.
struct HTTPStatusFailure: Error, Sendable {
    var status: Int
    var retryAfter: Duration?
    var isTransient: Bool { status == 408 || status == 429 || (500...599).contains(status) }
}

/// The server answered 206 for a different range than asked, or with a different validator.
struct RangeMismatch: Error, Sendable {
    var reason: String
}

/// A fresh download's first response is large enough for automatic segments, from a server that honours
/// ranges, with a validator, and after one window (``SegmentRamp``) its connection is capped: the attempt
/// stops there, keeping the bytes it wrote, and the engine continues in segments. An uncapped connection
/// is never split, so the automatic default costs nothing where one connection is as fast as it gets.
struct SplitOffer: Error, Sendable {
    var version: RangedVersion
}

/// A version of a resource that byte ranges can be asked of: its size, the validator sent in `If-Range`, and
/// what its resume record keeps (the probe of a segmented download and a split offer both learn it).
struct RangedVersion: Sendable {
    var total: Int64
    var validator: String
    var etag: String?
    var lastModified: String?
    var contentDisposition: String?
    var contentType: String?

    /// The version a response's headers name; nil without a validator usable in `If-Range` (a strong ETag or
    /// a Last-Modified).
    init?(total: Int64, headers: HTTPHeaders, url: URL) {
        etag = headers.first(name: "etag")
        lastModified = headers.first(name: "last-modified")
        guard let validator = ResumeRecord(url: url.absoluteString, etag: etag, lastModified: lastModified).ifRangeValidator
        else { return nil }
        self.total = total
        self.validator = validator
        contentDisposition = headers.first(name: "content-disposition")
        contentType = headers.first(name: "content-type")
    }
}

/// Receives one attempt's response on the event loop and streams its body into a `FileSink`.
final class ResponseDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = AttemptOutcome

    private let sink: FileSink
    /// This attempt's share of the run's bandwidth budget (`--limit-rate`), when it has one.
    private let flow: RateLimiter.Flow?
    private let requestedOffset: Int64
    private let sentValidator: String?
    private let url: URL
    /// For automatic segments: a 200 of at least this many bytes that could be split is measured over one
    /// window and ended there if its connection is capped.
    private let splitAbove: Int64?
    /// The rate at which a connection counts as not capped (``DownloadEngine/Configuration/uncappedRate``).
    private let uncappedRate: Double
    private let onProgress: @Sendable (Int64, Int64?) -> Void
    private let onStart: @Sendable (Int64, Int64?) -> Void

    private struct State {
        var outcome: AttemptOutcome?
        var writing = false
        var expectedTotal: Int64?
        var received: Int64 = 0
        /// A split on offer until the first body part a window after the head says whether the connection is capped.
        var split: (offer: SplitOffer, headAt: ContinuousClock.Instant)?
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - onStart: Called once the response head is accepted, with the offset the body starts at and the
    ///     full size when known.
    ///   - onProgress: Called per body part with the bytes this attempt received and the full size.
    init(
        sink: FileSink, requestedOffset: Int64, sentValidator: String?, url: URL, splitAbove: Int64? = nil,
        uncappedRate: Double = SegmentRamp.uncapped,
        onStart: @escaping @Sendable (Int64, Int64?) -> Void,
        onProgress: @escaping @Sendable (Int64, Int64?) -> Void,
        rateLimiter: RateLimiter? = nil
    ) {
        self.flow = rateLimiter?.flow()
        self.onStart = onStart
        self.sink = sink
        self.requestedOffset = requestedOffset
        self.sentValidator = sentValidator
        self.url = url
        self.splitAbove = splitAbove
        self.uncappedRate = uncappedRate
        self.onProgress = onProgress
    }

    /// Bytes of body this attempt handed to the sink.
    var receivedBytes: Int64 { state.withLock { $0.received } }

    /// How long this attempt has waited for the run's bandwidth budget (not a stall of its server).
    var limiterHeld: Duration { flow?.held ?? .zero }

    func didReceiveHead(task: HTTPClient.Task<AttemptOutcome>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let eventLoop = task.eventLoop
        let headers = head.headers
        switch head.status.code {
        case 200:
            // A full body: the server ignored Range, or the validator changed. Start over, never append.
            let length = headers.first(name: "content-length").flatMap { Int64($0) }
            if let splitAbove, let length, length >= splitAbove,
                headers.first(name: "accept-ranges")?.lowercased() == "bytes",
                let version = RangedVersion(total: length, headers: headers, url: url)
            {
                state.withLock { $0.split = (SplitOffer(version: version), .now) }
            }
            // Checked before the restart truncates anything: a failure leaves the partial file as it was.
            if let refusal = spaceRefusal(needing: length ?? 0, reclaiming: sink.size) {
                return eventLoop.makeFailedFuture(refusal)
            }
            sink.restart(record: record(from: headers, expected: length))
            state.withLock {
                $0.writing = true
                $0.expectedTotal = length
                $0.outcome = .body(expectedTotal: length)
            }
            onStart(0, length)
        case 206:
            guard let range = ContentRange(headers.first(name: "content-range") ?? ""), let start = range.start,
                start == requestedOffset
            else {
                return eventLoop.makeFailedFuture(
                    RangeMismatch(
                        reason:
                            "asked for bytes from \(requestedOffset), got \(headers.first(name: "content-range") ?? "no Content-Range")"
                    ))
            }
            if let sent = sentValidator, sent.hasPrefix("\""), let etag = headers.first(name: "etag"), etag != sent {
                return eventLoop.makeFailedFuture(RangeMismatch(reason: "ETag changed from \(sent) to \(etag)"))
            }
            if let sent = sentValidator, !sent.hasPrefix("\""), let modified = headers.first(name: "last-modified"),
                !Self.sameDate(sent, modified)
            {
                // A date in If-Range that the server ignored: these bytes are of another version.
                return eventLoop.makeFailedFuture(
                    RangeMismatch(reason: "Last-Modified changed from \(sent) to \(modified)"))
            }
            if let total = range.total, let refusal = spaceRefusal(needing: total - start, reclaiming: 0) {
                return eventLoop.makeFailedFuture(refusal)
            }
            if requestedOffset == 0 {
                // A 206 from the first byte (to a request without Range): resumable only with its record.
                sink.restart(record: record(from: headers, expected: range.total))
            }
            state.withLock {
                $0.writing = true
                $0.expectedTotal = range.total
                $0.outcome = .body(expectedTotal: range.total)
            }
            onStart(start, range.total)
        case let code where [301, 302, 303, 307, 308].contains(code) && headers.contains(name: "location"):
            let location = headers.first(name: "location") ?? ""
            state.withLock { $0.outcome = .redirect(location: location) }
        case 416:
            let total = ContentRange(headers.first(name: "content-range") ?? "")?.total
            state.withLock { $0.outcome = .rangeNotSatisfiable(total: total) }
        default:
            let retryAfter = headers.first(name: "retry-after").flatMap(RetryAfter.parse)
            return eventLoop.makeFailedFuture(HTTPStatusFailure(status: Int(head.status.code), retryAfter: retryAfter))
        }
        return eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<AttemptOutcome>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (writing, received, expected) = state.withLock { state -> (Bool, Int64, Int64?) in
            guard state.writing else { return (false, 0, nil) }
            state.received += Int64(buffer.readableBytes)
            return (true, state.received, state.expectedTotal)
        }
        guard writing else { return task.eventLoop.makeSucceededVoidFuture() }
        onProgress(received, expected)
        var written = sink.write(buffer, eventLoop: task.eventLoop)
        if let offer = judgeSplit(received: received) {
            // This part is written first: every byte of the first response stays on disk for the ranges.
            written = written.flatMap { task.eventLoop.makeFailedFuture(offer) }
        }
        guard let flow else { return written }
        // The next read waits for both the disk and the run's bandwidth budget.
        return written.and(flow.charge(buffer.readableBytes, on: task.eventLoop)).map { _ in }
    }

    /// The split to make now, once a window has passed since the head and the connection is capped; nil
    /// before the window, and for good once the connection turned out uncapped.
    private func judgeSplit(received: Int64) -> SplitOffer? {
        state.withLock { state in
            guard let split = state.split else { return nil }
            let elapsed = ContinuousClock.now - split.headAt
            guard elapsed >= SegmentRamp.window else { return nil }
            state.split = nil
            return SegmentRamp.isCapped(bytes: received, over: elapsed, uncapped: uncappedRate) ? split.offer : nil
        }
    }

    func didReceiveError(task: HTTPClient.Task<AttemptOutcome>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<AttemptOutcome>) throws -> AttemptOutcome {
        guard let outcome = state.withLock({ $0.outcome }) else {
            throw RangeMismatch(reason: "the response ended before its head")
        }
        return outcome
    }

    /// The failure when the rest of the body cannot fit on the library's file system (one `statvfs`).
    private func spaceRefusal(needing bytes: Int64, reclaiming: Int64) -> NewsstandError? {
        let folder = (sink.path as NSString).deletingLastPathComponent
        guard let figures = FreeSpace.shortfall(needing: bytes, at: folder, reclaimed: reclaiming) else { return nil }
        return NewsstandError(
            .insufficientSpace,
            FreeSpace.message("to download \(url.absoluteString)", needing: bytes, figures: figures, path: folder))
    }

    /// Whether two HTTP dates name the same second (compared as text when either cannot be parsed).
    private static func sameDate(_ first: String, _ second: String) -> Bool {
        guard let a = HTTPDate.parse(first), let b = HTTPDate.parse(second) else { return first == second }
        return a == b
    }

    private func record(from headers: HTTPHeaders, expected: Int64?) -> ResumeRecord {
        ResumeRecord(
            url: url.absoluteString, etag: headers.first(name: "etag"),
            lastModified: headers.first(name: "last-modified"),
            expectedBytes: expected, contentDisposition: headers.first(name: "content-disposition"),
            contentType: headers.first(name: "content-type"))
    }
}
