import Foundation
import Synchronization

/// Time as the scheduler sees it: the wall clock in the service, a simulated one in tests (a week of
/// checks runs in seconds).
public protocol SchedulerClock: Sendable {
    func now() -> Date
    /// Suspends until `deadline`; throws `CancellationError` when the task is cancelled first.
    func sleep(until deadline: Date) async throws
    /// True when time moves only when the scheduler sleeps: a check then takes no simulated time, so the
    /// scheduler lets the checks in flight finish before it sleeps.
    var isSimulated: Bool { get }
}

/// The real clock. One sleep until the deadline: no periodic wake-ups while idle.
public struct WallClock: SchedulerClock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(for: .milliseconds(Int64(min(seconds, 366 * 86_400) * 1000)))
    }
    public var isSimulated: Bool { false }
}

/// A clock that jumps to each deadline the scheduler sleeps until.
public final class SimulatedClock: SchedulerClock {
    private let current: Mutex<Date>

    public init(start: Date) { current = Mutex(start) }
    public func now() -> Date { current.withLock { $0 } }
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        current.withLock { $0 = max($0, deadline) }
        await Task.yield()
    }
    public var isSimulated: Bool { true }
}
