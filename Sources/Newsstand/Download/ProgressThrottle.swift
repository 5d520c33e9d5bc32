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
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(total - baseline) / seconds : 0
    }
}
