import AsyncHTTPClient
import NewsstandReports
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NewsstandCatalog
import NewsstandCore
import Synchronization

/// Delivers the event log to the library's hooks, in the process that made a change, after its commit.
///
/// Each hook has a position (its last acknowledged cursor, `.catalog/hooks/NAME.json`, written durably after
/// every acknowledgement) and a lock held while it is delivered to, so two processes never hand the same hook
/// the same event at once. Delivery is at least once: a kill between a hook's success and its position write
/// delivers that one event again (with the same id); one after the write never does. It runs in a task of its
/// own, and each exec hook on a thread of its own with a time limit, so a hook that fails or hangs holds up
/// neither downloads nor the other hooks. A failing event is retried (webhooks at once, twice, then like exec
/// hooks: by the next process that delivers, with backoff from 30 s up to an hour) for a day, then skipped with
/// an error in the log. A resident process (`issues serve`) calls ``keepRetrying()`` and is then that next
/// process itself: a timer nudges delivery when the earliest backoff ends.
package final class HookDelivery: Sendable {
    private let catalog: Catalog
    private let layout: LibraryLayout
    private let logger: Logger
    private let hooks: [Hook]
    private struct State {
        var task: Task<Void, Never>?
        var again = false
        /// Whether a round that leaves a hook backing off arms ``retryTimer``.
        var keepsRetrying = false
        var retryTimer: Task<Void, Never>?
        /// The earliest backoff end the rounds since the last finished one met.
        var nextRetry: Date?
    }
    private let state = Mutex(State())

    /// How long a failing event is retried before it is skipped.
    static let giveUpAfter: TimeInterval = 86_400

    /// The wait after a hook's first failure, doubled after each further one (up to an hour).
    static let firstBackoff: TimeInterval = {
        #if DEBUG
            // Lets the service's retry test see a backoff end in seconds.
            if let text = ProcessInfo.processInfo.environment["ISSUES_HOOK_BACKOFF"], let seconds = TimeInterval(text) {
                return seconds
            }
        #endif
        return 30
    }()

    package init(catalog: Catalog, layout: LibraryLayout, hooks: [Hook], logger: Logger) {
        self.catalog = catalog
        self.layout = layout
        self.hooks = hooks
        self.logger = logger
    }

    var isEmpty: Bool { hooks.isEmpty }

    /// Starts a hook at the log's end the first time it is seen, so that a new hook is not handed the whole
    /// history, yet gets every event of the changes made after this. Blocking.
    package func startNewHooks() throws {
        guard !hooks.isEmpty else { return }
        var end: Int64?
        for hook in hooks where !POSIX.exists(layout.hookPosition(hook.name)) {
            let cursor = try end ?? catalog.lastEventCursor()
            end = cursor
            try HookPosition(cursor: cursor).write(layout.hookPosition(hook.name))
        }
    }

    /// Asks for a delivery round (called after a commit that appended events); returns at once.
    package func nudge() {
        guard !hooks.isEmpty else { return }
        state.withLock { state in
            if state.task != nil {
                state.again = true
                return
            }
            state.task = Task.detached { await self.rounds() }
        }
    }

    /// Waits until every round asked for so far is done (not for a retry timer's later round).
    package func drain() async {
        while let task = state.withLock({ $0.task }) { await task.value }
    }

    /// From now on, a hook left backing off is retried by this process when its backoff ends (and a round
    /// runs at once, for what is waiting).
    package func keepRetrying() {
        state.withLock { $0.keepsRetrying = true }
        nudge()
    }

    /// Whether ``keepRetrying()`` was called: a reloaded delivery carries it on.
    package var keepsRetrying: Bool { state.withLock { $0.keepsRetrying } }

    /// Stops the retry timer (the delivery is being replaced).
    package func stopRetrying() {
        state.withLock { state in
            state.keepsRetrying = false
            state.retryTimer?.cancel()
            state.retryTimer = nil
        }
    }

    private func rounds() async {
        while true {
            state.withLock { $0.again = false }
            let retries = await withTaskGroup(of: Date?.self) { group in
                for hook in hooks { group.addTask { await self.deliver(to: hook) } }
                return await group.reduce(into: [Date]()) { if let date = $1 { $0.append(date) } }
            }
            let done = state.withLock { state -> Bool in
                if let earliest = retries.min() { state.nextRetry = min(state.nextRetry ?? earliest, earliest) }
                if state.again { return false }
                state.task = nil
                if state.keepsRetrying, let retry = state.nextRetry {
                    state.retryTimer?.cancel()
                    let delay = max(0, retry.timeIntervalSinceNow)
                    state.retryTimer = Task.detached {
                        try? await Task.sleep(for: .seconds(delay))
                        if !Task.isCancelled { self.nudge() }
                    }
                }
                state.nextRetry = nil
                return true
            }
            if done { return }
        }
    }

    /// Hands `hook` every event after its position, in order, stopping at the first that fails.
    /// - Returns: When the hook is to be tried again, if it is backing off after a failure.
    @discardableResult
    func deliver(to hook: Hook) async -> Date? {
        let layout = self.layout
        do {
            let lock = try await onOwnThread { try FileLock(path: layout.hookLock(hook.name)) }
            defer { withExtendedLifetime(lock) {} }
            let path = layout.hookPosition(hook.name)
            var position = try HookPosition.read(path) ?? HookPosition(cursor: catalog.lastEventCursor())
            if let retryAt = position.retryAt, retryAt > Date() { return retryAt }
            let events = try catalog.readEvents(after: position.cursor, limit: Int(Int32.max))
            var unsaved = false
            for event in events {
                guard hook.wants(event.kind.rawValue) else {
                    position.cursor = event.cursor
                    unsaved = true
                    continue
                }
                CrashPoint.reached("hook-delivering")
                let report = EventReport(event, layout: layout)
                if let failure = await attempt(report, hook: hook) {
                    let now = Date()
                    let first = position.firstFailure ?? now
                    if now.timeIntervalSince(first) >= Self.giveUpAfter {
                        logger.error(
                            "hook \(hook.name) gave up on event \(report.id) (\(report.kind)) after a day: \(failure)")
                        position = HookPosition(cursor: event.cursor)
                        try position.write(path)
                        continue
                    }
                    position.failures += 1
                    position.firstFailure = first
                    let backoff = Backoff.step(failures: position.failures, first: Self.firstBackoff, cap: 3600)
                    position.retryAt = now.addingTimeInterval(backoff)
                    try position.write(path)
                    logger.warning(
                        "hook \(hook.name) failed on event \(report.id) (\(report.kind)): \(failure); retrying in \(Int(backoff)) s or later")
                    return position.retryAt
                }
                CrashPoint.reached("hook-delivered")
                position = HookPosition(cursor: event.cursor)
                try position.write(path)
                unsaved = false
                CrashPoint.reached("hook-acknowledged")
            }
            if unsaved { try position.write(path) }
        } catch {
            logger.error("cannot deliver events to hook \(hook.name): \(error)")
        }
        return nil
    }

    /// Delivers one event; nil when the hook took it, else what went wrong.
    private func attempt(_ report: EventReport, hook: Hook) async -> String? {
        let body: [UInt8]
        do {
            body = Array(try ReportJSON.text(report, compact: true).utf8) + [0x0A]
        } catch {
            return "cannot encode the event: \(error)"
        }
        switch hook.action {
        case .exec(let argv):
            return await run(argv, report: report, body: body, timeout: hook.timeout)
        case .notify:
            guard HookProcess.isInstalled("notify-send") else {
                logger.debug("hook \(hook.name): notify-send is not installed; event \(report.id) skipped")
                return nil
            }
            let (summary, text) = Self.notification(report)
            return await run(
                ["notify-send", "--app-name=issues", summary, text], report: report, body: body, timeout: hook.timeout)
        case .webhook(let url, let secret):
            // Twice more at once, a second and then two apart: a server restarting answers again.
            var failure: String?
            for wait in [0, 1, 2] as [UInt64] {
                if wait > 0 { try? await Task.sleep(nanoseconds: wait * 1_000_000_000) }
                failure = await post(body, to: url, secret: secret, report: report, timeout: hook.timeout)
                if failure == nil { return nil }
            }
            return failure
        }
    }

    private func run(_ argv: [String], report: EventReport, body: [UInt8], timeout: TimeInterval) async -> String? {
        let environment = Self.environment(for: report, library: layout.root)
        let scratch = layout.hookPositions
        let outcome = await (try? onOwnThread {
            HookProcess.run(argv, environment: environment, input: body, timeout: timeout, scratchFolder: scratch)
        }) ?? .failedToStart("no thread")
        switch outcome {
        case .exited(0): return nil
        case .exited(let status): return "\(argv[0]) exited with status \(status)"
        case .signalled(let signal): return "\(argv[0]) was killed by signal \(signal)"
        case .timedOut: return "\(argv[0]) ran past its time limit of \(Int(timeout)) s and was killed"
        case .failedToStart(let reason): return "cannot run \(reason)"
        }
    }

    private func post(_ body: [UInt8], to url: URL, secret: String, report: EventReport, timeout: TimeInterval) async
        -> String?
    {
        let timestamp = String(Int(Date().timeIntervalSince1970))
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "issues/\(NewsstandInfo.version)")
        request.headers.add(name: "X-Issues-Event", value: report.kind)
        request.headers.add(name: "X-Issues-Event-Id", value: report.id)
        request.headers.add(name: "X-Issues-Timestamp", value: timestamp)
        request.headers.add(name: "X-Issues-Signature", value: "sha256=" + Self.signature(body, timestamp: timestamp, secret: secret))
        request.body = .bytes(ByteBuffer(bytes: body))
        // Redirects are not followed: the signed event would go, signature and all, wherever a redirect points
        // (another origin); the webhook is the URL the config names.
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let failure: String?
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
            _ = try? await response.body.collect(upTo: 1 << 16)
            let code = response.status.code
            if (200..<300).contains(code) {
                failure = nil
            } else if (300..<400).contains(code) {
                failure = "\(url.absoluteString) answered \(code), a redirect, which a webhook does not follow: set its URL to where it points"
            } else {
                failure = "\(url.absoluteString) answered \(code)"
            }
        } catch {
            failure = "\(url.absoluteString): \(error)"
        }
        try? await client.shutdown()
        return failure
    }

    /// `hex(HMAC-SHA256(secret, timestamp + "." + body))`: what `X-Issues-Signature` carries after `sha256=`.
    static func signature(_ body: [UInt8], timestamp: String, secret: String) -> String {
        let key = SymmetricKey(data: Array(secret.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(timestamp.utf8) + [UInt8(ascii: ".")] + body, using: key)
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    /// The `ISSUES_EVENT_*` variables a hook gets besides its own environment (values as they are: they
    /// reach the hook as data, never through a shell).
    static func environment(for report: EventReport, library: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("ISSUES_EVENT_") && $0.key != "ISSUES_CRASH_AT"
        }
        environment["ISSUES_LIBRARY"] = library
        environment["ISSUES_EVENT_ID"] = report.id
        environment["ISSUES_EVENT_CURSOR"] = String(report.cursor)
        environment["ISSUES_EVENT_KIND"] = report.kind
        environment["ISSUES_EVENT_TIME"] = report.time
        environment["ISSUES_EVENT_REASON"] = report.reason
        environment["ISSUES_EVENT_DETAIL"] = report.detail
        if let issue = report.issue {
            environment["ISSUES_EVENT_ISSUE_NAME"] = issue.name
            environment["ISSUES_EVENT_ISSUE_DATE"] = issue.date
            environment["ISSUES_EVENT_ISSUE_STATUS"] = issue.status
            environment["ISSUES_EVENT_ISSUE_FOLDER"] = issue.directory
        }
        if let subscription = report.subscription {
            environment["ISSUES_EVENT_SUBSCRIPTION_ID"] = subscription.id
            environment["ISSUES_EVENT_SUBSCRIPTION_NAME"] = subscription.name
            environment["ISSUES_EVENT_SUBSCRIPTION_URL"] = subscription.url
        }
        // An environment entry cannot hold a NUL; names never do (they are validated), but be sure.
        return environment.filter { !$0.key.contains("\u{0}") && !$0.value.contains("\u{0}") }
    }

    /// A desktop notification's title and text.
    static func notification(_ report: EventReport) -> (String, String) {
        let what = report.issue?.name ?? report.subscription?.name ?? report.detail ?? ""
        switch report.kind {
        case "issue.available": return ("Issue available", what)
        case "issue.failed": return ("Issue failed", what)
        case "issue.added": return ("Issue added", what)
        case "issue.removed": return ("Issue removed", what)
        case "subscription.failing": return ("Feed failing", what + (report.reason.map { ": \($0)" } ?? ""))
        case "subscription.gone": return ("Feed gone", what)
        case "library.low-space": return ("Library low on space", what)
        default: return (report.kind, what)
        }
    }
}

/// Runs blocking work on a new thread (not the download's blocking pool, which a hanging hook or a long wait
/// for another process's hook lock must never tie up).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.name = "issues-hook"
        thread.start()
    }
}
