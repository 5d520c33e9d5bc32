import Foundation
import Logging
import Newsstand
import NewsstandCore
import NewsstandSubscriptions
import Synchronization

/// What the scheduler did: one value per start and finish, for the service's log lines and for tests.
public enum SchedulerEvent: Sendable {
    /// A feed check started at `at`; it was due at `due`.
    case checking(subscription: String, origin: String, due: Date, at: Date)
    /// A check finished; `next` is the plan it left (nil when the subscription was removed meanwhile).
    case checked(subscription: String, report: SyncReport, next: CheckPlan?)
    /// A download of one issue started (a new issue, or one a stop interrupted).
    case downloading(issue: String, origin: String, at: Date)
    case downloaded(issue: String, summary: DownloadSummary?, error: NewsstandError?)
}

/// Keeps subscriptions current by itself: each is checked when its ``CheckPlan`` says, its new issues are
/// downloaded as it asks, and downloads a stop interrupted resume at start.
///
/// One dispatcher decides every start, so the per-host rule (``HostSlots``: 2 at a time, starts 1 s
/// apart per origin) holds across feeds and downloads without a lock. It sleeps until the next due time
/// or the next free slot, whichever is first; a finish or ``reload()`` wakes it. Idle, it is one sleep.
public actor Scheduler {
    public struct Options: Sendable {
        /// Requests at a time to one origin.
        public var perHost = 2
        /// Seconds between two starts at one origin.
        public var spacing: TimeInterval = 1
        /// Jobs at a time over all origins: bounds memory and the catalog's lock queue when hundreds of feeds
        /// on different hosts are due together.
        public var concurrent = 8
        /// How new issues are downloaded; each download job takes one slot, so `jobs` is 1.
        public var download = DownloadOptions(jobs: 1)

        public init() {}
    }

    private enum Job: Hashable {
        case check(id: String)
        case download(issue: String)
    }

    private struct Pending {
        var job: Job
        var name: String
        var origin: String
        var due: Date
    }

    private enum Wake: Sendable {
        case timer
        case reload
        case finishedCheck(id: String, origin: String, report: SyncReport?, next: CheckPlan?, downloads: [(String, String)])
        case finishedDownload(issue: String, origin: String)
    }

    private let library: Library
    private let clock: any SchedulerClock
    private var options: Options
    private let onEvent: @Sendable (SchedulerEvent) -> Void
    private var slots: HostSlots
    private var pending: [Job: Pending] = [:]
    private var running: Set<Job> = []
    private var continuation: AsyncStream<Wake>.Continuation?
    private var reloadRequested = false

    public init(
        library: Library, clock: any SchedulerClock = WallClock(), options: Options = Options(),
        onEvent: @escaping @Sendable (SchedulerEvent) -> Void = { _ in }
    ) {
        self.library = library
        self.clock = clock
        self.options = options
        self.onEvent = onEvent
        self.slots = HostSlots(concurrent: options.perHost, spacing: options.spacing)
    }

    /// Re-reads every subscription's plan (a subscription added, changed or removed by another process, a
    /// reloaded configuration). Safe from any task; a no-op when the scheduler is not running.
    public func reload() {
        reloadRequested = true
        continuation?.yield(.reload)
    }

    /// Downloads started from now on use `download` (a reloaded configuration's rate, segments and so on);
    /// each job still downloads one asset at a time.
    public func reconfigure(download: DownloadOptions) {
        options.download = download
        options.download.jobs = 1
    }

    /// Returns once the scheduler's actor runs this: the watchdog's proof that it is not wedged.
    public func heartbeat() {}

    /// Runs until the task is cancelled. Checks and downloads in flight are cancelled then: a merge is one
    /// crash-safe commit and a download resumes from its bytes, so nothing is left half-done.
    /// - Parameter onReady: Called once the plans are read and interrupted downloads queued (the service's
    ///   `READY=1`).
    public func run(onReady: @Sendable () -> Void = {}) async throws {
        let (wakes, continuation) = AsyncStream<Wake>.makeStream()
        self.continuation = continuation
        defer { continuation.finish() }
        await library.removeSubscriptionTemporaries()
        try await reloadAll()
        for (name, origin) in try await library.interruptedIssues() {
            let job = Job.download(issue: name)
            pending[job] = Pending(job: job, name: name, origin: origin, due: clock.now())
        }
        onReady()
        var iterator = wakes.makeAsyncIterator()
        await withDiscardingTaskGroup { group in
            var timer: Task<Void, Never>?
            defer { timer?.cancel() }
            while !Task.isCancelled {
                let nextWake = startDue(in: &group, continuation: continuation)
                timer?.cancel()
                timer = nil
                // Nothing in flight: the service sleeps until the next due time, and what the start or the last
                // round freed goes back to the system rather than stay in malloc's arenas (about 2.7 MiB of the
                // idle service with 1,000 subscriptions).
                if running.isEmpty { POSIX.returnFreedMemory() }
                // On a simulated clock a check takes no time: let those in flight finish before time moves.
                if let nextWake, !(clock.isSimulated && !running.isEmpty) {
                    let clock = self.clock
                    timer = Task {
                        do {
                            try await clock.sleep(until: nextWake)
                            continuation.yield(.timer)
                        } catch {}
                    }
                }
                guard let wake = await iterator.next(isolation: #isolation) else { break }
                await handle(wake)
            }
            group.cancelAll()
        }
    }

    /// Starts every job that is due and whose origin has a free slot; returns when to look again.
    private func startDue(in group: inout DiscardingTaskGroup, continuation: AsyncStream<Wake>.Continuation) -> Date? {
        let now = clock.now()
        var nextWake: Date?
        func wake(at date: Date) { nextWake = min(nextWake ?? date, date) }
        // Only what is due is ordered: with 1,000 subscriptions most wait, and sorting them all on every wake
        // made a simulated week quadratic. Downloads first (their issues already wait), then checks by due time.
        var due: [Pending] = []
        for item in pending.values {
            if item.due <= now { due.append(item) } else { wake(at: item.due) }
        }
        due.sort { a, b in
            if case .download = a.job, case .check = b.job { return true }
            if case .check = a.job, case .download = b.job { return false }
            return (a.due, a.name) < (b.due, b.name)
        }
        for item in due {
            guard running.count < options.concurrent else { break }  // a finish wakes us
            guard let earliest = slots.earliestStart(item.origin, now: now) else { continue }  // a finish wakes us
            guard earliest <= now else {
                wake(at: earliest)
                continue
            }
            slots.started(item.origin, at: now)
            pending[item.job] = nil
            running.insert(item.job)
            start(item, now: now, in: &group, continuation: continuation)
        }
        return nextWake
    }

    private func start(
        _ item: Pending, now: Date, in group: inout DiscardingTaskGroup, continuation: AsyncStream<Wake>.Continuation
    ) {
        let library = self.library
        let clock = self.clock
        let onEvent = self.onEvent
        let downloadOptions = options.download
        switch item.job {
        case .check(let id):
            onEvent(.checking(subscription: item.name, origin: item.origin, due: item.due, at: now))
            let gate = gate(startedAt: item.origin)
            group.addTask {
                let checked = await library.check(subscriptionID: id, now: clock.now(), gate: gate)
                var downloads: [(String, String)] = []
                if let report = checked?.report ?? nil, report.downloadsNewIssues {
                    for name in report.keptIssues {
                        if let origin = await library.downloadOrigin(ofIssueNamed: name) { downloads.append((name, origin)) }
                    }
                }
                continuation.yield(
                    .finishedCheck(
                        id: id, origin: item.origin, report: checked?.report ?? nil, next: checked?.next ?? nil,
                        downloads: downloads))
            }
        case .download(let issue):
            onEvent(.downloading(issue: issue, origin: item.origin, at: now))
            var downloadOptions = downloadOptions
            downloadOptions.startGate = gate(startedAt: item.origin)
            group.addTask {
                do {
                    let summary = try await library.download(issues: [issue], options: downloadOptions)
                    onEvent(.downloaded(issue: issue, summary: summary, error: nil))
                } catch let error as NewsstandError {
                    onEvent(.downloaded(issue: issue, summary: nil, error: error))
                } catch {
                    onEvent(.downloaded(issue: issue, summary: nil, error: NewsstandError(.cancelled, "\(issue): \(error)")))
                }
                continuation.yield(.finishedDownload(issue: issue, origin: item.origin))
            }
        }
    }

    /// The gate of one job. The dispatcher started the job within the rule; its first request goes out now
    /// and counts as the origin's last start from the moment it leaves (a check reads its record first, a
    /// download prepares its files, and the spacing is between requests). Each later request (the next asset
    /// of an issue) takes the next start its origin allows (``HostSlots/reserve(_:now:)``) and waits for it,
    /// so that an issue of many files is fetched at the pace of the per-host rule, not back to back.
    private func gate(startedAt origin: String) -> StartGate {
        let firstIsStarted = Mutex<String?>(origin)
        let clock = self.clock
        return StartGate { [weak self] requested in
            guard let self else { throw CancellationError() }
            let first = firstIsStarted.withLock { started in
                defer { started = nil }
                return started == requested
            }
            if first {
                await self.requestLeft(requested)
            } else {
                try await clock.sleep(until: await self.reserveStart(requested))
            }
        }
    }

    private func requestLeft(_ origin: String) {
        slots.requestLeft(origin, at: clock.now())
    }

    private func reserveStart(_ origin: String) -> Date {
        slots.reserve(origin, now: clock.now())
    }

    private func handle(_ wake: Wake) async {
        switch wake {
        case .timer:
            break
        case .reload:
            guard reloadRequested else { return }
            reloadRequested = false
            try? await reloadAll()
        case .finishedCheck(let id, let origin, let report, let next, let downloads):
            slots.finished(origin)
            running.remove(.check(id: id))
            if let report { onEvent(.checked(subscription: report.subscription, report: report, next: next)) }
            if let next {
                schedule(id: id, name: report?.subscription ?? id, origin: origin, plan: next)
            } else {
                pending[.check(id: id)] = nil  // removed meanwhile
            }
            for (name, host) in downloads where !running.contains(.download(issue: name)) {
                let job = Job.download(issue: name)
                pending[job] = Pending(job: job, name: name, origin: host, due: clock.now())
            }
        case .finishedDownload(let issue, let origin):
            slots.finished(origin)
            running.remove(.download(issue: issue))
        }
    }

    /// Replaces every pending check by the plans read now (downloads stay queued).
    private func reloadAll() async throws {
        for job in pending.keys { if case .check = job { pending[job] = nil } }
        for (subscription, plan) in try await library.schedule(now: clock.now()) {
            schedule(subscription, plan)
        }
    }

    private func schedule(_ subscription: Subscription, _ plan: CheckPlan) {
        schedule(id: subscription.id, name: subscription.name, origin: URLCredentials.origin(of: subscription.url), plan: plan)
    }

    private func schedule(id: String, name: String, origin: String, plan: CheckPlan) {
        let job = Job.check(id: id)
        guard let due = plan.due, !running.contains(job) else {
            pending[job] = nil
            return
        }
        pending[job] = Pending(job: job, name: name, origin: origin, due: due)
    }
}
