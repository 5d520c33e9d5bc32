import Dispatch
import Synchronization

/// What the workers of one extraction share: the limits' running totals, the folders known to exist, the
/// first failure, and the point where they all wait before closing their writers.
///
/// One extraction has one budget whether it runs on one worker or several, so the limits count the same
/// way in both.
final class ExtractionBudget: Sendable {
    let plan: ExtractionPlan
    var workers: Int { plan.workers }

    private struct State {
        /// Bytes of data written (the extent of each entry, holes included).
        var bytes: Int64 = 0
        /// Objects created or replaced: entries, plus the parent folders libarchive creates implicitly.
        var objects = 0
        /// Normalised paths of the folders known to exist, so that implicit parents count once.
        var directories = Set<[UInt8]>()
        /// The failure of the lowest entry index so far: what a sequential run would have met first.
        var failure: (index: Int, error: ArchiveError)?
        var arrived = Set<Int>()
        /// Workers blocked in ``waitForAllWorkers(_:)``.
        var waiting = 0
        var directoriesReady = false
    }
    private let state = Mutex(State())
    private let gate = DispatchSemaphore(value: 0)
    private let directoriesGate = DispatchSemaphore(value: 0)

    init(plan: ExtractionPlan = .sequential) {
        self.plan = plan
    }

    var bytes: Int64 { state.withLock { $0.bytes } }

    /// Adds `more` bytes unless that passes `limit`; returns the new total, or nil (nothing added).
    func addBytes(_ more: Int64, limit: Int64) -> Int64? {
        state.withLock { state in
            guard more <= limit - state.bytes else { return nil }
            state.bytes += more
            return state.bytes
        }
    }

    /// Counts an object and those of its parent folders (normalised paths, nearest first) not known yet;
    /// a folder entry is remembered too. Returns the new number of objects.
    func addObject(parents: [[UInt8]], directory: [UInt8]?) -> Int {
        state.withLock { state in
            var added = 1
            for parent in parents {
                guard state.directories.insert(parent).inserted else { break }
                added += 1
            }
            if let directory { state.directories.insert(directory) }
            state.objects += added
            return state.objects
        }
    }

    /// Records a failure at entry `index` (`-1`: before any entry; `Int.max`: after them all).
    func fail(at index: Int, _ error: ArchiveError) {
        state.withLock { state in
            if state.failure.map({ index < $0.index }) ?? true { state.failure = (index, error) }
        }
    }

    /// Whether a worker about to take entry `index` should stop: an earlier entry already failed, so
    /// nothing it does can change the outcome.
    func shouldStop(before index: Int) -> Bool {
        state.withLock { $0.failure.map { $0.index < index } ?? false }
    }

    var failure: ArchiveError? { state.withLock { $0.failure?.error } }

    /// Waits until every worker has finished its entries. A writer applies its folders' final times and
    /// permissions when it closes; closing before another worker has written into those folders would
    /// leave their times wrong. Every worker must call it, even one that failed before it began; a
    /// second call from the same worker returns at once.
    func waitForAllWorkers(_ worker: Int) {
        arrive(worker, waiting: true)
    }

    /// Counts a worker that will never run (its thread could not start) as arrived, without waiting.
    func withdraw(_ worker: Int) {
        if worker == 0 { announceDirectoriesReady() }
        arrive(worker, waiting: false)
    }

    /// Worker 0 says the listed folders exist (or that it failed, or will never run). Once only.
    func announceDirectoriesReady() {
        let first = state.withLock { state in
            defer { state.directoriesReady = true }
            return !state.directoriesReady
        }
        guard first else { return }
        for _ in 1..<max(workers, 1) { directoriesGate.signal() }
    }

    /// The other workers wait here before their files (see ``ExtractionPlan/directoriesFirst``).
    func waitForDirectories() {
        directoriesGate.wait()
    }

    private func arrive(_ worker: Int, waiting: Bool) {
        let (release, mustWait) = state.withLock { state -> (Int, Bool) in
            guard state.arrived.insert(worker).inserted else { return (0, false) }
            // The last to arrive lets the waiting ones go and does not wait itself.
            if state.arrived.count == workers { return (state.waiting, false) }
            if waiting { state.waiting += 1 }
            return (0, waiting)
        }
        for _ in 0..<release { gate.signal() }
        if mustWait { gate.wait() }
    }
}
