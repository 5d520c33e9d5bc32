import Synchronization
import NewsstandCore

/// The ranges' progress, shared by their transfers: the bytes received (for progress events) and the
/// bytes landed on disk (for the plan in the resume record).
///
/// The record is saved from the sinks' queues once a range has landed another MiB since its last save,
/// and at most four times a second (saving every 20 ms slowed a fast download by a tenth, bench
/// `segments`, unthrottled). A `kill -9` does not cost the bytes landed since: a resume finds them in the
/// partial file (``SegmentPlan/advancedToBytesOnDisk(in:)``), so what is fetched again is what was in
/// flight, plus the last few KiB of a range when they end in zeros. Nothing is
/// flushed on the way (flushing a file being written at disk speed stalls the download): the plan names
/// the boot it was saved in, and after a restart of the machine, when the page cache and with it bytes
/// the plan claims may be lost, it is not trusted (see ``SegmentPlan/bootID``).
final class SegmentTracker: Sendable {
    private struct State {
        var plan: SegmentPlan
        var savedNext: [Int64]
        var lastSave: ContinuousClock.Instant
        var received: Int64
        var fetched: Int64 = 0
    }
    private let state: Mutex<State>
    /// Orders the saves: a later snapshot never lands before an earlier one.
    private let saving = Mutex<Void>(())
    private let record: ResumeRecord
    private let job: DownloadEngine.Job
    private static let saveStep: Int64 = 1 << 20

    init(plan: SegmentPlan, record: ResumeRecord, job: DownloadEngine.Job) {
        state = Mutex(
            State(
                plan: plan, savedNext: plan.segments.map(\.next), lastSave: .now, received: plan.received))
        self.record = record
        self.job = job
    }

    func segment(_ index: Int) -> SegmentPlan.Segment { state.withLock { $0.plan.segments[index] } }

    /// Bytes fetched over the network by this run (for the summary).
    var fetched: Int64 { state.withLock { $0.fetched } }

    func addFetched(_ bytes: Int64) { state.withLock { $0.fetched += bytes } }

    /// The asset's bytes received so far.
    var receivedSoFar: Int64 { state.withLock { $0.received } }

    /// Counts bytes received (not yet landed). - Returns: The asset's bytes received so far.
    func receive(_ count: Int) -> Int64 {
        state.withLock { state in
            state.received += Int64(count)
            return state.received
        }
    }

    /// The bytes of a run of adjacent ranges have landed up to `end`: each range's cursor moves to the part
    /// of `end` inside it. Saves the plan when it is due.
    func landed(_ run: ClosedRange<Int>, at end: Int64) {
        let due = state.withLock { state -> Bool in
            var due = false
            for index in run {
                let segment = state.plan.segments[index]
                // A range of the run that was already whole moves no cursor, and is no reason to save.
                let next = min(end, segment.end)
                guard next > segment.next else { continue }
                state.plan.segments[index].next = next
                let done = next >= segment.end
                if done || next - state.savedNext[index] >= SegmentTracker.saveStep {
                    due = due || done || ContinuousClock.now - state.lastSave >= .milliseconds(250)
                }
            }
            return due
        }
        if due { try? save() }
    }

    /// Saves the plan as it stands (every cursor in it has landed). Blocking.
    func save() throws {
        try saving.withLock { _ in
            let plan = state.withLock { state -> SegmentPlan in
                state.savedNext = state.plan.segments.map(\.next)
                state.lastSave = .now
                return state.plan
            }
            var updated = record
            updated.segments = plan
            try updated.save(job.recordPath)
        }
    }
}

/// The ranges not started yet, taken one at a time by the connections.
final class RangeQueue: Sendable {
    private struct State {
        var pending: [Int]?
        var joining = false
    }
    private let state: Mutex<State>

    init(_ indices: [Int]) { state = Mutex(State(pending: indices)) }

    /// The next range to fetch, with (after ``joinRest()``) the adjacent ranges after it for which
    /// `untouched` holds, so that one request asks for them all; nil when none is left (or the transfer is
    /// being stopped). A range with bytes already on disk ends a run: its bytes are never asked for again.
    func next(joiningWhile untouched: (Int) -> Bool) -> ClosedRange<Int>? {
        state.withLock { state in
            guard let first = state.pending?.first else { return nil }
            state.pending?.removeFirst()
            var last = first
            while state.joining, let following = state.pending?.first, following == last + 1, untouched(following) {
                state.pending?.removeFirst()
                last = following
            }
            return first...last
        }
    }

    var remaining: Int { state.withLock { $0.pending?.count ?? 0 } }

    /// Whether ``joinRest()`` was called.
    var isJoining: Bool { state.withLock { $0.joining } }

    /// No more connections will open: from now on a connection takes every adjacent range left at once,
    /// because a range of its own each would cost a request and a pause at each boundary.
    func joinRest() { state.withLock { $0.joining = true } }

    /// Hands out nothing more.
    func close() { state.withLock { $0.pending = nil } }
}

/// Whether a segmented download gets more than one connection: it starts with one, and after one
/// window adds the rest only if that one is slower than a fast local link. A server that caps each
/// connection (the reason for segments) is far below it; one that does not, over loopback or a LAN, is
/// above it and keeps one connection, where more would only contend for the same disk and cores. A
/// single look over a whole window, because servers that cap connections send in bursts (nginx's
/// `limit_rate` about once a second), which shorter measures of change misread.
enum SegmentRamp {
    static let window: Duration = .milliseconds(300)
    /// One connection at least this fast (bytes per second) is not being capped.
    static let uncapped: Double = 64 * 1024 * 1024

    /// Whether to open the other connections, given the bytes one connection received over `elapsed`.
    static func isCapped(bytes: Int64, over elapsed: Duration, uncapped: Double = uncapped) -> Bool {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 && Double(bytes) / seconds < uncapped
    }

    /// The least a connection must have received, at a range's end, to be judged before the window ends:
    /// more than a capping server's bursts (nginx's `limit_rate` sends about a second's worth at once).
    static let earlyJudgement: Int64 = 16 * 1024 * 1024

    /// Whether one connection that received `bytes` over `elapsed`, ending a range, is surely not capped:
    /// enough bytes to be more than a burst, at least as fast as ``uncapped``.
    static func isUncapped(range bytes: Int64, over elapsed: Duration, uncapped: Double = uncapped) -> Bool {
        bytes >= earlyJudgement && elapsed < window && !isCapped(bytes: bytes, over: elapsed, uncapped: uncapped)
    }
}
