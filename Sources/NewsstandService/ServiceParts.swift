import Foundation
import Synchronization
import Logging
import Newsstand
import ServiceLifecycle
import UnixSignals

/// The scheduler as a member of the process's `ServiceGroup`: a graceful shutdown (SIGTERM) cancels it, which
/// checkpoints what is in flight (a merge is one commit; a download keeps its bytes for the next start).
public struct SchedulerService: Service {
    public let scheduler: Scheduler
    let onReady: @Sendable () -> Void

    public init(scheduler: Scheduler, onReady: @escaping @Sendable () -> Void = {}) {
        self.scheduler = scheduler
        self.onReady = onReady
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await scheduler.run(onReady: onReady)
        }
    }
}

/// Says `READY=1` once every part the service waits for has said it is up (the scheduler's plans read, the
/// server listening), and `STOPPING=1` at a graceful shutdown.
public final class Readiness: Sendable {
    private let notifier: SystemdNotifier
    private let waiting: Mutex<Set<String>>

    public init(notifier: SystemdNotifier, parts: Set<String>) {
        self.notifier = notifier
        self.waiting = Mutex(parts)
    }

    /// `part` is up; the last one sends `READY=1`.
    public func ready(_ part: String) {
        let all = waiting.withLock { waiting -> Bool in
            guard waiting.remove(part) != nil else { return false }
            return waiting.isEmpty
        }
        if all { notifier.notify("READY=1") }
    }

    public func stopping() { notifier.notify("STOPPING=1") }
}

/// systemd's watchdog: `WATCHDOG=1` every half `WATCHDOG_USEC`, each only after the scheduler answered (an
/// actor hop), so a wedged scheduler stops the pings and systemd restarts the service. Idle without a
/// watchdog: then it waits for the shutdown and nothing else.
public struct WatchdogService: Service {
    let notifier: SystemdNotifier
    let scheduler: Scheduler

    public init(notifier: SystemdNotifier, scheduler: Scheduler) {
        self.notifier = notifier
        self.scheduler = scheduler
    }

    public func run() async throws {
        guard let interval = notifier.watchdogInterval else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            while true {
                await scheduler.heartbeat()
                notifier.notify("WATCHDOG=1")
                try await Task.sleep(for: interval)
            }
        }
    }
}

/// SIGHUP re-reads the configuration (through `reload`) and the subscriptions' plans.
public struct ReloadService: Service {
    let scheduler: Scheduler
    let reload: @Sendable () async -> Void

    public init(scheduler: Scheduler, reload: @escaping @Sendable () async -> Void) {
        self.scheduler = scheduler
        self.reload = reload
    }

    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                await reload()
                await scheduler.reload()
            }
        }
    }
}

/// Follows the event log, as `issues events --follow` does (woken by inotify, never polled): every event,
/// whichever process made it, is handed to the hooks (a CLI command delivers its own, but one killed after
/// its commit, or a hook backing off, is left to this process), and one that says a subscription came, went
/// away, moved or is gone (through the web page, `issues subscribe` in another process, …) re-reads the plans.
public struct EventWatchService: Service {
    let library: Library
    let scheduler: Scheduler

    public init(library: Library, scheduler: Scheduler) {
        self.library = library
        self.scheduler = scheduler
    }

    public func run() async throws {
        let start = try await library.lastEventCursor()
        try await library.keepDeliveringEvents()
        try? await cancelWhenGracefulShutdown {
            for try await event in library.events(since: start, follow: true) {
                library.nudgeEventDelivery()
                if event.kind.hasPrefix("subscription.") { await scheduler.reload() }
            }
        }
    }
}
