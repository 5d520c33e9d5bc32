import NIOCore
import Synchronization

/// The bandwidth budget of one download run (`--limit-rate`): every transfer and segment of the run
/// draws from it, so the run as a whole, not each connection, keeps to the rate.
///
/// Backpressure, not sleeping: a body part is charged after it arrived, and the future handed back to
/// AsyncHTTPClient completes only once the budget has paid for it, so the channel reads nothing more
/// meanwhile and the bytes held stay at one body part per transfer.
///
/// Fair shares: each request charges through a ``Flow`` of its own, and the budget pays for the charges
/// waiting side by side, each flow's at an equal share of the rate (``FairSchedule``), not one after another
/// in the order they came. Every transfer waiting for the budget so gets the same bytes over time, whatever
/// the size of its body parts; one with nothing waiting takes no share, so its share goes to the others
/// (the budget never idles while a charge waits, and the run as a whole keeps to the rate). Served first
/// come, first served, a transfer queued behind the others' parts went without bytes for many seconds: with
/// `--jobs 8 --limit-rate 4K` and a short stall window, 6 of 8 were given up as stalled.
///
/// How long each flow has waited for the budget is kept (``Flow/held``), so that the stall limit counts
/// only the time a transfer waits for its server (``StallWatch``).
final class RateLimiter: Sendable {
    let bytesPerSecond: Int64
    private let state: Mutex<State>
    private let flows = Atomic<UInt64>(0)

    /// A charge waiting for the budget: completed (from any thread: NIO runs its callbacks on its own loop)
    /// once paid for.
    struct Waiter: Sendable {
        let promise: EventLoopPromise<Void>
        let flow: Flow
    }

    private struct State: Sendable {
        var schedule: FairSchedule<Waiter>
        /// The earliest instant a timer is set for, if any: a later one is not needed.
        var timerAt: UInt64?

        /// The instant a timer must be set for (none when one is set for then or earlier, or nothing waits).
        mutating func timerNeeded() -> UInt64? {
            guard let next = schedule.nextRelease else { return nil }
            if let timerAt, timerAt <= next { return nil }
            timerAt = next
            return next
        }
    }

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        state = Mutex(State(schedule: FairSchedule(bytesPerSecond: max(1, bytesPerSecond))))
    }

    /// A new flow: one per request (a transfer's attempt, or one segment), made when its delegate is.
    func flow() -> Flow {
        Flow(limiter: self, id: flows.add(1, ordering: .relaxed).newValue)
    }

    /// Charges `bytes` that `flow` just received; the future completes when the budget has covered them.
    fileprivate func charge(_ bytes: Int, flow: Flow, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard bytes > 0 else { return eventLoop.makeSucceededVoidFuture() }
        let now = NIODeadline.now().uptimeNanoseconds
        let promise = eventLoop.makePromise(of: Void.self)
        flow.beginWait(at: now)
        let waiter = Waiter(promise: promise, flow: flow)
        let (released, timer) = state.withLock { state in
            let released = state.schedule.arrive(flow: flow.id, bytes: Int64(bytes), at: now, waiter: waiter)
            return (released, state.timerNeeded())
        }
        complete(released, at: now)
        if let timer { setTimer(for: timer, on: eventLoop) }
        return promise.futureResult
    }

    /// Pays the budget up to the timer's instant (or later, if it fired late) and sets the next timer.
    private func setTimer(for deadline: UInt64, on eventLoop: any EventLoop) {
        let task = eventLoop.scheduleTask(deadline: .uptimeNanoseconds(deadline)) {
            self.tick(deadline, on: eventLoop, rearming: true)
        }
        // A loop shut down never runs it: what is due is paid, and the next charge sets a timer on its own loop.
        task.futureResult.whenFailure { _ in self.tick(deadline, on: eventLoop, rearming: false) }
    }

    private func tick(_ deadline: UInt64, on eventLoop: any EventLoop, rearming: Bool) {
        let now = NIODeadline.now().uptimeNanoseconds
        let (released, timer) = state.withLock { state in
            if state.timerAt == deadline { state.timerAt = nil }
            let released = state.schedule.advance(to: now)
            return (released, rearming ? state.timerNeeded() : nil)
        }
        complete(released, at: now)
        if let timer { setTimer(for: timer, on: eventLoop) }
    }

    private func complete(_ released: [FairSchedule<Waiter>.Released], at now: UInt64) {
        for charge in released {
            charge.waiter.flow.endWait(at: now)
            charge.waiter.promise.succeed()
        }
    }

    /// One request's place in the budget, and how long it has waited for it.
    final class Flow: Sendable {
        private let limiter: RateLimiter
        let id: UInt64
        private struct Waiting {
            var count = 0
            var since: UInt64 = 0
            var total: UInt64 = 0
        }
        private let waiting = Mutex(Waiting())

        fileprivate init(limiter: RateLimiter, id: UInt64) {
            self.limiter = limiter
            self.id = id
        }

        /// Charges `bytes` just received; the future completes when the budget has covered them.
        func charge(_ bytes: Int, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
            limiter.charge(bytes, flow: self, on: eventLoop)
        }

        /// How long this flow's charges have waited for the budget so far, a wait in progress included.
        var held: Duration {
            let now = NIODeadline.now().uptimeNanoseconds
            let nanoseconds = waiting.withLock { w in
                w.total + (w.count > 0 && now > w.since ? now - w.since : 0)
            }
            return .nanoseconds(Int64(clamping: nanoseconds))
        }

        fileprivate func beginWait(at now: UInt64) {
            waiting.withLock { w in
                if w.count == 0 { w.since = now }
                w.count += 1
            }
        }

        fileprivate func endWait(at now: UInt64) {
            waiting.withLock { w in
                guard w.count > 0 else { return }
                w.count -= 1
                if w.count == 0, now > w.since { w.total += now - w.since }
            }
        }
    }
}

/// The accounting of ``RateLimiter``, on a clock passed in (so tests can drive it deterministically).
///
/// Processor sharing over bytes (the fluid model of fair queuing): every flow with a charge waiting pays its
/// oldest one off at an equal share of the rate, `rate / n` for `n` such flows, and a charge's caller is
/// released the instant it is paid off. While any charge waits the budget is spent at exactly the rate, so
/// over any window the bytes released are within one body part per transfer of `rate × window`; an idle
/// spell earns no credit (the clock of what is paid jumps to the first charge after it, so there is no burst
/// afterwards). A transfer alone waits `bytes / rate` for each part, as with one token bucket.
///
/// Why not turns (each charge paid in full, one after another, the next chosen by fair-queuing tags): a
/// transfer has a charge waiting only after its own was paid for and its next part was read, so at the
/// instant a turn ended the transfer just served never had one waiting, and a transfer of small parts got a
/// turn only between two turns of the others: a third of its share, against parts 64 times its size.
struct FairSchedule<Waiter: Sendable>: Sendable {
    let bytesPerSecond: Int64
    /// Up to when the charges waiting have been paid for, in nanoseconds.
    private(set) var paidUntil: UInt64 = 0
    /// The charges waiting, oldest first; each flow's oldest is the one being paid.
    private var waiting: [Charge] = []

    private struct Charge: Sendable {
        var flow: UInt64
        var left: Double
        var waiter: Waiter
    }

    /// A charge paid off: its waiter and the instant it was.
    struct Released: Sendable {
        var waiter: Waiter
        var at: UInt64
    }

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    /// How many charges wait.
    var waitingCount: Int { waiting.count }

    /// The instant the next charge will be paid off if no other comes, or nil when none waits.
    var nextRelease: UInt64? {
        let heads = headIndices()
        guard let smallest = heads.map({ waiting[$0].left }).min() else { return nil }
        return paidUntil + nanoseconds(toPay: smallest, sharedBy: heads.count)
    }

    /// A charge of `bytes` by `flow` at `now` (nanoseconds on a monotonic clock), after paying up to `now`.
    /// - Returns: The charges paid off up to `now` (of other flows, or this one's earlier charges).
    mutating func arrive(flow: UInt64, bytes: Int64, at now: UInt64, waiter: Waiter) -> [Released] {
        let released = advance(to: now)
        waiting.append(Charge(flow: flow, left: Double(max(0, bytes)), waiter: waiter))
        return released
    }

    /// Pays what waits up to `now`.
    /// - Returns: The charges paid off, in the order they were.
    mutating func advance(to now: UInt64) -> [Released] {
        var released: [Released] = []
        while paidUntil < now {
            let heads = headIndices()
            guard let smallest = heads.map({ waiting[$0].left }).min() else {
                paidUntil = now  // idle: no credit for the time nothing waited
                break
            }
            let toPayOff = nanoseconds(toPay: smallest, sharedBy: heads.count)
            let step = min(toPayOff, now - paidUntil)
            let paid = step == toPayOff ? smallest : Double(step) * Double(bytesPerSecond) / 1e9 / Double(heads.count)
            paidUntil += step
            for index in heads { waiting[index].left -= paid }
            // Paid off (to within a thousandth of a byte: what the rounding of instants leaves), and only at the
            // instant it was due, never a nanosecond before.
            let done = step == toPayOff ? heads.filter { waiting[$0].left <= 0.001 } : []
            for index in done { released.append(Released(waiter: waiting[index].waiter, at: paidUntil)) }
            for index in done.sorted(by: >) { waiting.remove(at: index) }
        }
        return released
    }

    /// The index of each flow's oldest charge.
    private func headIndices() -> [Int] {
        var seen: Set<UInt64> = []
        return waiting.indices.filter { seen.insert(waiting[$0].flow).inserted }
    }

    /// How long paying `bytes` takes at a share of the rate: rounded up to the nanosecond (what floating point
    /// leaves under a thousandth of one aside), so a charge is never released early.
    private func nanoseconds(toPay bytes: Double, sharedBy flows: Int) -> UInt64 {
        let value = max(0, bytes) * Double(flows) * 1e9 / Double(bytesPerSecond)
        return value >= Double(UInt64.max / 4) ? UInt64.max / 4 : UInt64(max(0, (value - 0.001).rounded(.up)))
    }
}
