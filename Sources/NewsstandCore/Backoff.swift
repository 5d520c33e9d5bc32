import Foundation

/// The one doubling rule every retry uses: download attempts (`RetryPolicy`, with full random jitter), feed
/// checks (`CheckPlan`, with a jitter fixed per subscription so `schedule` shows what the service does) and
/// hook deliveries (no jitter: one process retries them).
package enum Backoff {
    /// `first` × 2^(failures − 1), at most `cap`; `first` for a count below 1. Never overflows.
    /// - Parameters:
    ///   - failures: How many failures in a row (1 for the first).
    ///   - first: The wait after the first failure, in seconds.
    ///   - cap: The longest wait, in seconds.
    package static func step(failures: Int, first: TimeInterval, cap: TimeInterval) -> TimeInterval {
        // 2^62 × any positive step is past any cap worth having; beyond it the shift would overflow.
        let doublings = min(max(failures - 1, 0), 62)
        return min(first * Double(UInt64(1) << UInt64(doublings)), cap)
    }
}
