import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import NewsstandCore

/// A segment's response disagreed with its plan: the resource changed, or the server stopped honouring
/// ranges. The download then starts over on one connection; bytes of two versions are never joined.
struct SegmentDisagreement: Error, Sendable {
    var reason: String
}

/// Reads the head of the probe that decides whether an asset can be fetched in segments: a request for
/// its first byte. A 206 says ranges work and gives the full size; anything else ends the request at its
/// head (a 200 would otherwise send the whole body down this connection).
final class ProbeDelegate: HTTPClientResponseDelegate, Sendable {
    struct Head: Sendable {
        var status: Int
        var headers: HTTPHeaders
    }
    /// Ends a probe that is not a 206 without reading its body.
    struct Stop: Error {}

    private let head = Mutex<Head?>(nil)

    var answer: Head? { head.withLock { $0 } }

    func didReceiveHead(task: HTTPClient.Task<Head?>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let answer = Head(status: Int(head.status.code), headers: head.headers)
        self.head.withLock { $0 = answer }
        // A one-byte 206 is read to its end, so that its connection goes back to the pool for the segments.
        return answer.status == 206 ? task.eventLoop.makeSucceededVoidFuture() : task.eventLoop.makeFailedFuture(Stop())
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Head?>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Head?>) throws -> Head? { answer }
}

/// Receives one segment's response on the event loop: checks that it is exactly the range asked for, of
/// the planned version, and streams its bytes into the segment's own `FileSink`.
final class SegmentDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    private let plan: SegmentPlan
    private let segment: SegmentPlan.Segment
    private let sink: FileSink
    /// This segment's share of the run's bandwidth budget (`--limit-rate`), when it has one.
    private let flow: RateLimiter.Flow?
    private let onBytes: @Sendable (Int) -> Void

    private struct State {
        var writing = false
        var received: Int64 = 0
    }
    private let state = Mutex(State())

    init(
        plan: SegmentPlan, segment: SegmentPlan.Segment, sink: FileSink, rateLimiter: RateLimiter?,
        onBytes: @escaping @Sendable (Int) -> Void
    ) {
        self.plan = plan
        self.segment = segment
        self.sink = sink
        self.flow = rateLimiter?.flow()
        self.onBytes = onBytes
    }

    /// Bytes of body this request handed to the sink (for the stall watch).
    var receivedBytes: Int64 { state.withLock { $0.received } }

    /// How long this request has waited for the run's bandwidth budget (not a stall of its server).
    var limiterHeld: Duration { flow?.held ?? .zero }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let headers = head.headers
        let eventLoop = task.eventLoop
        switch head.status.code {
        case 206:
            let text = headers.first(name: "content-range") ?? ""
            guard let range = ContentRange(text), plan.accepts(range, for: segment) else {
                return eventLoop.makeFailedFuture(
                    SegmentDisagreement(
                        reason: "asked for \(segment.rangeHeader) of \(plan.total), got \(text.isEmpty ? "no Content-Range" : text)"))
            }
            guard plan.matches(etag: headers.first(name: "etag"), lastModified: headers.first(name: "last-modified"))
            else {
                return eventLoop.makeFailedFuture(
                    SegmentDisagreement(reason: "the resource changed (its validator is no longer \(plan.validator))"))
            }
            state.withLock { $0.writing = true }
            return eventLoop.makeSucceededVoidFuture()
        case 200:
            return eventLoop.makeFailedFuture(
                SegmentDisagreement(reason: "the server sent the whole resource for a range (it changed, or ignores ranges)"))
        case 416, 301, 302, 303, 307, 308:
            return eventLoop.makeFailedFuture(
                SegmentDisagreement(reason: "the server answered \(head.status.code) for a planned range"))
        default:
            let retryAfter = headers.first(name: "retry-after").flatMap(RetryAfter.parse)
            return eventLoop.makeFailedFuture(HTTPStatusFailure(status: Int(head.status.code), retryAfter: retryAfter))
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let count = Int64(buffer.readableBytes)
        let accepted = state.withLock { state -> Bool? in
            guard state.writing else { return nil }
            guard state.received + count <= segment.end - segment.next else { return false }
            state.received += count
            return true
        }
        switch accepted {
        case nil: return task.eventLoop.makeSucceededVoidFuture()
        case false?:
            return task.eventLoop.makeFailedFuture(SegmentDisagreement(reason: "the server sent more than the range asked for"))
        case true?: break
        }
        onBytes(buffer.readableBytes)
        let written = sink.write(buffer, eventLoop: task.eventLoop)
        guard let flow else { return written }
        // Every segment draws on the run's one budget: N connections never get N times the limit.
        return written.and(flow.charge(buffer.readableBytes, on: task.eventLoop)).map { _ in }
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}
}
