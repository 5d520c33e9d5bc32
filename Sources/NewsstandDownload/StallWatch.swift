import Synchronization

/// A minimum-throughput limit, as curl's `--speed-limit`/`--speed-time` and aria2's `--lowest-speed-limit`:
/// an attempt that receives fewer than ``minimumBytes`` over any ``window`` is given up as stalled. A read
/// timeout alone never fires on a server that trickles a byte every few seconds.
public struct StallLimit: Sendable, Hashable {
    /// The fewest body bytes an attempt must receive in every window.
    public var minimumBytes: Int64
    /// How long the throughput is measured over.
    public var window: Duration

    /// Creates a limit.
    ///
    /// - Parameters:
    ///   - minimumBytes: The fewest body bytes an attempt must receive in every window.
    ///   - window: How long the throughput is measured over.
    public init(minimumBytes: Int64 = 1024, window: Duration = .seconds(60)) {
        self.minimumBytes = minimumBytes
        self.window = window
    }

    /// 1 KiB per minute: far below any real link, far above a server that sends a byte every few seconds.
    public static let `default` = StallLimit()
}

/// The error an attempt ends with when the ``StallLimit`` fired.
struct StallFailure: Error, Sendable {
    var limit: StallLimit
    var received: Int64

    var reason: String {
        "stalled: \(received) bytes in the last \(limit.window), under the minimum of \(limit.minimumBytes)"
    }
}

/// Watches one request's body counter and calls `stop` when too little arrived over the window.
///
/// Samples `received()` a few times per window and compares it with the sample one window earlier, so a
/// single slow patch of less than a window is forgiven. Time the request spent waiting for the run's
/// bandwidth budget (`--limit-rate`) does not count: it reads nothing from its server meanwhile, by design,
/// so only the time it waits for its server makes up a window.
final class StallWatch: Sendable {
    /// The failure once fired; a class so that the watching task can share it (a `Mutex` cannot be captured).
    private final class Verdict: Sendable {
        let value = Mutex<StallFailure?>(nil)
    }

    private let fired = Verdict()
    private let task: Task<Void, Never>

    /// Starts watching.
    ///
    /// - Parameters:
    ///   - limit: The limit.
    ///   - received: The body bytes received so far (read from the watching task).
    ///   - held: How long the request has waited for the rate limiter so far (``RateLimiter/Flow/held``):
    ///     left out of every window.
    ///   - stop: Cancels the request; called once, when the limit fires.
    init(
        limit: StallLimit, received: @escaping @Sendable () -> Int64, held: (@Sendable () -> Duration)? = nil,
        stop: @escaping @Sendable () -> Void
    ) {
        let fired = self.fired
        task = Task {
            let step = max(limit.window / 4, .milliseconds(50))
            let clock = ContinuousClock()
            // The time the request waits for its server: the clock's, less what the rate limiter held it.
            var serverTime: ContinuousClock.Instant { clock.now - (held?() ?? .zero) }
            let start = serverTime
            // (time, bytes) samples of the last window.
            var samples: [(ContinuousClock.Instant, Int64)] = [(start, received())]
            while !Task.isCancelled {
                try? await Task.sleep(for: step)
                if Task.isCancelled { return }
                let now = serverTime
                let bytes = received()
                samples.append((now, bytes))
                // The oldest sample at least a window old is the baseline; older ones are dropped.
                while samples.count > 1 && now - samples[1].0 >= limit.window {
                    samples.removeFirst()
                }
                guard let baseline = samples.first, now - baseline.0 >= limit.window else { continue }
                if bytes - baseline.1 < limit.minimumBytes {
                    fired.value.withLock { $0 = StallFailure(limit: limit, received: bytes - baseline.1) }
                    stop()
                    return
                }
            }
        }
    }

    /// The failure, if the limit fired.
    var failure: StallFailure? { fired.value.withLock { $0 } }

    /// Stops watching.
    func cancel() { task.cancel() }
}
