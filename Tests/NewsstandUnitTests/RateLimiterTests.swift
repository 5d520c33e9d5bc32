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
        var schedule = FairSchedule<Int>(bytesPerSecond: 512 << 10)
        _ = schedule.arrive(flow: 1, bytes: 1 << 20, at: 0, waiter: 0)
        #expect(schedule.nextRelease == 2 * Self.second)
        let early = schedule.advance(to: 2 * Self.second - 1)
        #expect(early.isEmpty)
        let paid = schedule.advance(to: 2 * Self.second)
        #expect(paid.map(\.at) == [2 * Self.second])
        // Arriving after it was paid for, the next part waits only for itself.
        _ = schedule.arrive(flow: 1, bytes: 256 << 10, at: 2 * Self.second, waiter: 0)
        #expect(schedule.nextRelease == 2 * Self.second + Self.second / 2)
    }

    @Test func anIdleSpellEarnsNoBurst() {
        var schedule = FairSchedule<Int>(bytesPerSecond: 1 << 20)
        _ = schedule.arrive(flow: 1, bytes: 1 << 20, at: 0, waiter: 0)
        let paid = schedule.advance(to: Self.second)
        #expect(paid.count == 1)
        let none = schedule.arrive(flow: 1, bytes: 1 << 20, at: 60 * Self.second, waiter: 0)
        #expect(none.isEmpty)
        #expect(schedule.nextRelease == 61 * Self.second)
    }

    @Test func concurrentChargesShareTheRate() {
        var schedule = FairSchedule<Int>(bytesPerSecond: 1 << 20)
        // Three transfers each hand over 512 KiB at the same instant: together 1.5 s of budget, shared.
        for flow in 1...3 { _ = schedule.arrive(flow: UInt64(flow), bytes: 512 << 10, at: 0, waiter: flow) }
        #expect(schedule.nextRelease == 3 * Self.second / 2)
        // A fourth, small, comes at 0.3 s: it gets a quarter of the rate from then on, and is paid off first.
        _ = schedule.arrive(flow: 4, bytes: 64 << 10, at: 3 * Self.second / 10, waiter: 4)
        let released = schedule.advance(to: 2 * Self.second)
        #expect(released.map(\.waiter) == [4, 1, 2, 3])
        let last = released.last?.at ?? 0
        #expect(last >= 3 * Self.second / 2 + Self.second / 16 && last <= 3 * Self.second / 2 + Self.second / 16 + 10)
        #expect(schedule.waitingCount == 0)
    }

    /// Transfers that each charge a part as soon as the last one was paid for (as AsyncHTTPClient reads the
    /// next only then), the `i`th with parts of `partSizes[i]` until `stops[i]` (if given), on the schedule.
    /// - Returns: Each release: its instant, its flow, its bytes.
    static func simulate(
        rate: Int64, partSizes: [Int64], stops: [UInt64?]? = nil, until end: UInt64
    ) -> [(at: UInt64, flow: Int, bytes: Int64)] {
        var schedule = FairSchedule<Int>(bytesPerSecond: rate)
        var ready: [UInt64?] = partSizes.indices.map { UInt64($0) * 1_000 }
        var released: [(at: UInt64, flow: Int, bytes: Int64)] = []
        while true {
            let arrival = ready.indices.compactMap { i in ready[i].map { (i, $0) } }.min { $0.1 < $1.1 }
            let due = schedule.nextRelease
            var paid: [FairSchedule<Int>.Released] = []
            if let arrival, arrival.1 < end, due.map({ arrival.1 <= $0 }) ?? true {
                let (i, at) = arrival
                ready[i] = nil
                paid = schedule.arrive(flow: UInt64(i), bytes: partSizes[i], at: at, waiter: i)
            } else if let due, due < end {
                paid = schedule.advance(to: due)
            } else {
                break
            }
            for charge in paid {
                let flow = charge.waiter
                released.append((charge.at, flow, partSizes[flow]))
                if let stop = stops?[flow], charge.at >= stop {
                    ready[flow] = nil
                } else {
                    ready[flow] = charge.at + 200_000  // the next part comes 0.2 ms later
                }
            }
        }
        return released
    }

    /// Four transfers reading as fast as the budget lets them, with parts of different sizes: every
    /// window of a few seconds receives the rate, within one body part.
    @Test func manyTransfersHoldTheRateOverEveryWindow() {
        let rate: Int64 = 2 << 20
        let released = Self.simulate(rate: rate, partSizes: [16 << 10, 64 << 10, 256 << 10, 1 << 20], until: 30 * Self.second)
        for start in stride(from: UInt64(0), to: 25 * Self.second, by: Int(Self.second / 2)) {
            let window = 3 * Self.second
            let bytes = released.filter { $0.at >= start && $0.at < start + window }.reduce(0) { $0 + $1.bytes }
            let expected = rate * 3
            #expect(abs(bytes - expected) <= 2 * (1 << 20), "window from \(start): \(bytes) bytes")
        }
    }

    /// The same four: each receives a quarter of the rate, within a part or two, though one hands over parts 64
    /// times the size of another's (first come, first served gave each the same number of parts instead: the
    /// 16 KiB transfer got about 1 % of the budget).
    @Test func transfersGetEqualSharesWhateverTheirPartSizes() {
        let rate: Int64 = 2 << 20
        let parts: [Int64] = [16 << 10, 64 << 10, 256 << 10, 1 << 20]
        let released = Self.simulate(rate: rate, partSizes: parts, until: 40 * Self.second)
        for flow in parts.indices {
            let bytes = released.filter { $0.flow == flow && $0.at >= 10 * Self.second && $0.at < 30 * Self.second }
                .reduce(0) { $0 + $1.bytes }
            let share = rate * 20 / 4
            #expect(abs(bytes - share) <= 2 * (1 << 20), "transfer \(flow) (parts of \(parts[flow])): \(bytes) bytes")
        }
    }

    /// Eight small transfers at 4 KiB/s: none goes long without its turn (what a short stall window needs to
    /// see), and each gets an eighth.
    @Test func eightTransfersTakeTurns() {
        let parts: [Int64] = [1_024, 4_096, 2_048, 1_024, 4_096, 1_500, 3_000, 1_024]
        let released = Self.simulate(rate: 4_096, partSizes: parts, until: 120 * Self.second)
        for flow in parts.indices {
            let times = released.filter { $0.flow == flow }.map(\.at)
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
            // A turn every eight parts at most: 8 × 4 KiB at 4 KiB/s.
            #expect((gaps.max() ?? 0) <= 12 * Self.second, "transfer \(flow): a gap of \(gaps.max() ?? 0) ns")
            let bytes = released.filter { $0.flow == flow && $0.at >= 20 * Self.second && $0.at < 100 * Self.second }
                .reduce(0) { $0 + $1.bytes }
            #expect(abs(bytes - 4_096 * 80 / 8) <= 2 * 4_096, "transfer \(flow): \(bytes) bytes in 80 s")
        }
    }

    /// A transfer that stops charging (it finished, or its server went quiet) leaves its share to the others:
    /// the two left then receive half the rate each, and the run keeps to the whole rate.
    @Test func anIdleTransfersShareGoesToTheOthers() {
        let rate: Int64 = 1 << 20
        let released = Self.simulate(
            rate: rate, partSizes: [64 << 10, 64 << 10, 64 << 10], stops: [nil, nil, 10 * Self.second],
            until: 30 * Self.second)
        for flow in 0..<2 {
            let bytes = released.filter { $0.flow == flow && $0.at >= 15 * Self.second && $0.at < 25 * Self.second }
                .reduce(0) { $0 + $1.bytes }
            #expect(abs(bytes - rate * 10 / 2) <= 2 * (64 << 10), "transfer \(flow): \(bytes) bytes in 10 s")
        }
        #expect(released.filter { $0.flow == 2 && $0.at > 10 * Self.second + Self.second }.isEmpty)
    }
}
