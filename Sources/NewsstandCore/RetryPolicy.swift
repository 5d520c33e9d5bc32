/// When and how often a failed transfer is tried again.
///
/// Transient failures (connection loss, timeouts, 408, 429, 5xx) are retried with exponential backoff
/// and full jitter, or after the server's `Retry-After`. The attempt counter resets whenever an
/// attempt made progress, so a connection that keeps dropping mid-body still finishes.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in a row without a single new byte before the asset fails.
    public var maxAttemptsWithoutProgress: Int
    /// The first backoff step.
    public var baseDelay: Duration
    /// The longest backoff step.
    public var maxDelay: Duration
    /// The longest `Retry-After` honoured; longer requests are capped to it.
    public var maxRetryAfter: Duration

    /// Creates a policy.
    public init(
        maxAttemptsWithoutProgress: Int = 6, baseDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(30),
        maxRetryAfter: Duration = .seconds(120)
    ) {
        self.maxAttemptsWithoutProgress = max(1, maxAttemptsWithoutProgress)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// The wait before retry number `attempt` (1-based) of a run of attempts without progress.
    /// - Parameters:
    ///   - attempt: How many attempts in a row failed without progress.
    ///   - retryAfter: The server's `Retry-After`, which wins when present.
    ///   - madeProgress: Whether the failed attempt received bytes; such retries start almost at once.
    package func delay(attempt: Int, retryAfter: Duration?, madeProgress: Bool) -> Duration {
        if let retryAfter { return min(retryAfter, maxRetryAfter) }
        if madeProgress { return .milliseconds(50) }
        let ceiling = Backoff.step(failures: attempt, first: baseDelay.timeInterval, cap: maxDelay.timeInterval)
        let millis = Int(ceiling * 1000)
        // Full jitter keeps many clients from retrying in lockstep; never below a tenth of the step.
        return .milliseconds(Int.random(in: max(millis / 10, 1)...max(millis, 1)))
    }
}
