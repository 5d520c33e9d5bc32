import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The accounting of `--limit-rate`, on a clock the test drives (no timing).
@Suite(.timeLimit(.minutes(5))) struct RateLimiterTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aBodyPartWaitsForWhatItCosts() {
        var bucket = TokenBucket(bytesPerSecond: 512 << 10)
        #expect(bucket.reserve(bytes: 1 << 20, atNanoseconds: 0) == 2 * Self.second)
        // Arriving after it was paid for, the next part waits only for itself.
        #expect(bucket.reserve(bytes: 256 << 10, atNanoseconds: 2 * Self.second) == Self.second / 2)
    }

    @Test func anIdleSpellEarnsNoBurst() {
        var bucket = TokenBucket(bytesPerSecond: 1 << 20)
        _ = bucket.reserve(bytes: 1 << 20, atNanoseconds: 0)
        #expect(bucket.reserve(bytes: 1 << 20, atNanoseconds: 60 * Self.second) == Self.second)
    }

    @Test func concurrentTransfersQueueBehindOneAnother() {
        var bucket = TokenBucket(bytesPerSecond: 1 << 20)
        // Three transfers each hand over 512 KiB at the same instant: together 1.5 s of budget.
        let waits = (0..<3).map { _ in bucket.reserve(bytes: 512 << 10, atNanoseconds: 0) }
        #expect(waits == [Self.second / 2, Self.second, 3 * Self.second / 2])
    }

    /// Four transfers reading as fast as the budget lets them, with parts of different sizes: every
    /// window of a few seconds receives the rate, within one body part.
    @Test func manyTransfersHoldTheRateOverEveryWindow() {
        let rate: Int64 = 2 << 20
        var bucket = TokenBucket(bytesPerSecond: rate)
        let partSizes: [Int64] = [16 << 10, 64 << 10, 256 << 10, 1 << 20]
        // When each transfer may next hand over a part, and the log of (release instant, bytes).
        var ready: [UInt64] = [0, 1_000, 2_000, 3_000]
        var released: [(at: UInt64, bytes: Int64)] = []
        while let now = ready.min(), now < 30 * Self.second, let index = ready.firstIndex(of: now) {
            let bytes = partSizes[index]
            let wait = bucket.reserve(bytes: bytes, atNanoseconds: now)
            released.append((now, bytes))
            ready[index] = now + wait
        }
        for start in stride(from: UInt64(0), to: 25 * Self.second, by: Int(Self.second / 2)) {
            let window = 3 * Self.second
            let bytes = released.filter { $0.at >= start && $0.at < start + window }.reduce(0) { $0 + $1.bytes }
            let expected = rate * 3
            #expect(abs(bytes - expected) <= 2 * (1 << 20), "window from \(start): \(bytes) bytes")
        }
    }
}
