import NIOCore
import Synchronization

/// The bandwidth budget of one download run (`--limit-rate`): every transfer and segment of the run
/// draws from it, so the run as a whole, not each connection, keeps to the rate.
///
/// Backpressure, not sleeping: a body part is charged after it arrived, and the future handed back to
/// AsyncHTTPClient completes only once the budget has paid for it, so the channel reads nothing more
/// meanwhile and the bytes held stay at one body part per transfer.
final class RateLimiter: Sendable {
    let bytesPerSecond: Int64
    private let bucket: Mutex<TokenBucket>

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        bucket = Mutex(TokenBucket(bytesPerSecond: max(1, bytesPerSecond)))
    }

    /// Charges `bytes` just received; the future completes when the budget has covered them.
    func charge(_ bytes: Int, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let now = NIODeadline.now().uptimeNanoseconds
        let wait = bucket.withLock { $0.reserve(bytes: Int64(bytes), atNanoseconds: now) }
        guard wait > 0 else { return eventLoop.makeSucceededVoidFuture() }
        return eventLoop.scheduleTask(in: .nanoseconds(Int64(clamping: wait))) {}.futureResult
    }
}

/// The accounting of ``RateLimiter``, on a clock passed in (so tests can drive it deterministically).
///
/// A virtual schedule (GCRA) rather than a counter of tokens: `paidUntil` is the instant the bytes
/// charged so far will have been paid for at the rate. A charge pushes it on by `bytes / rate`, and the
/// caller waits until then. Charges from concurrent transfers queue behind one another, so they share
/// the rate; an idle spell earns no credit (no burst afterwards), so over any window of a few body
/// parts' worth of time the bytes released are within one body part of `rate × window`.
struct TokenBucket: Sendable {
    let bytesPerSecond: Int64
    private(set) var paidUntil: UInt64?

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    /// Reserves `bytes` at `now` (nanoseconds on a monotonic clock).
    /// - Returns: How many nanoseconds the caller waits before reading more.
    mutating func reserve(bytes: Int64, atNanoseconds now: UInt64) -> UInt64 {
        let start = max(paidUntil ?? now, now)
        // bytes × 1e9 overflows past ~18 GB in one charge, which a body part never is; clamped, not trapped.
        let (product, overflow) = UInt64(max(0, bytes)).multipliedReportingOverflow(by: 1_000_000_000)
        let cost = overflow ? UInt64.max / 2 : product / UInt64(bytesPerSecond)
        let (end, over) = start.addingReportingOverflow(cost)
        paidUntil = over ? UInt64.max : end
        return (paidUntil ?? now) - now
    }
}
