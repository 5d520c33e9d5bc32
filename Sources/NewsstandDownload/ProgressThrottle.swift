import Synchronization

/// Rate-limits progress reports to a few per second and computes the transfer rate.
final class ProgressThrottle: Sendable {
    private let start: ContinuousClock.Instant
    private let baseline: Int64
    private let last = Mutex<ContinuousClock.Instant?>(nil)
    /// Where this response's body starts: the offset asked for, or 0 when the server sent it all. Kept here
    /// because the two progress callbacks share it, and a `Mutex` (not copyable) cannot be captured by them.
    let bodyStart: Mutex<Int64>

    init(start: ContinuousClock.Instant, baseline: Int64, bodyStart: Int64) {
        self.start = start
        self.baseline = baseline
        self.bodyStart = Mutex(bodyStart)
    }

    func shouldReport(total: Int64) -> Double? {
        let now = ContinuousClock.now
        let due = last.withLock { last -> Bool in
            if let previous = last, now - previous < .milliseconds(200) { return false }
            last = now
            return true
        }
        guard due else { return nil }
        return rate(total: total, at: now)
    }

    /// The rate for the last report of a completed transfer, which is made whatever the throttle says.
    func finalRate(total: Int64) -> Double {
        rate(total: total, at: ContinuousClock.now)
    }

    private func rate(total: Int64, at now: ContinuousClock.Instant) -> Double {
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(total - baseline) / seconds : 0
    }
}
