import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

/// The real clock. One sleep until the deadline (``QuietSleep``): no periodic wake-ups while idle.
public struct WallClock: SchedulerClock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await QuietSleep.sleep(seconds: seconds)
    }
    public var isSimulated: Bool { false }
}

/// A sleep that wakes the process once. On Linux a pending `Task.sleep` keeps libdispatch's timer thread
/// re-arming its timerfd once a second (`strace` of a program that only sleeps 600 s this way: one
/// `timerfd_settime` a second, the idle service's 60 context switches a minute). Here a thread of its own
/// waits in `poll(2)` for the whole time, and a pipe wakes it early when the task is cancelled.
enum QuietSleep {
    /// Returns after `seconds` (or early, on a signal: callers look at the clock again); throws
    /// `CancellationError` when the task is cancelled.
    static func sleep(seconds: Double) async throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return try await Task.sleep(for: .seconds(seconds)) }
        // Not inherited by hooks the service runs (pipe2 is not imported).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (wake, waker) = (ends[0], ends[1])
        defer {
            close(wake)
            close(waker)
        }
        // poll's timeout is an Int32 of milliseconds: a longer wait returns after 23 days and is slept again.
        let milliseconds = Int32(min((seconds * 1000).rounded(.up), 2_000_000_000))
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let thread = Thread {
                    var fds = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
                    _ = poll(&fds, 1, milliseconds)
                    continuation.resume()
                }
                thread.stackSize = 64 * 1024
                thread.start()
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(waker, &byte, 1)
        }
        try Task.checkCancellation()
    }
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
