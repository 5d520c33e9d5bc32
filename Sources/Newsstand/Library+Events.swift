import Foundation
import NewsstandCatalog
import NewsstandCore
import Synchronization

/// The event log in the public API: what happened to the library, in order, as it happens.
extension Library {
    /// The events after `cursor`, oldest first, as ``EventReport``s; with `follow`, then every new one as it
    /// is committed (by this process or any other), until the loop is left or its task cancelled.
    ///
    /// ```swift
    /// for try await event in library.events(since: lastSeen, follow: true) {
    ///     if event.kind == "issue.available" { print(event.issue?.directory ?? "") }
    /// }
    /// ```
    /// Reading runs on a thread of its own; following sleeps on an inotify watch of the catalog folder
    /// (no polling). Events older than the log keeps (compacted by age and count) are not returned.
    /// - Parameters:
    ///   - cursor: The last cursor already seen; 0 for every event the log holds.
    ///   - follow: Whether to wait for new events after the existing ones.
    /// - Returns: A sequence that ends after the existing events (without `follow`) or never (with it); it
    ///   throws `.manifestUnreadable` naming the log when a line of it is damaged.
    public nonisolated func events(since cursor: Int64 = 0, follow: Bool = false) -> AsyncThrowingStream<EventReport, any Error> {
        let follower = EventFollower(catalog: catalog, layout: layout, follow: follow)
        return AsyncThrowingStream { continuation in follower.start(after: cursor, continuation) }
    }

    /// The cursor of the last event in the log (0 when there is none): where `events(since:)` starts to see
    /// only what comes next.
    public func lastEventCursor() async throws -> Int64 {
        let catalog = self.catalog
        return try await runBlocking {
            try catalog.recoverIfNeeded()
            return try catalog.lastEventCursor()
        }
    }

    /// Hands every hook the events it has not acknowledged yet (including those of other processes, and
    /// those a killed process committed but never delivered), and waits until done. Hooks still backing
    /// off after a failure are left for later.
    public func deliverEvents() async throws {
        let catalog = self.catalog
        try await runBlocking { try catalog.recoverIfNeeded() }
        delivery.nudge()
        await delivery.drain()
    }

    /// Waits until the hooks have been handed the events of this process's changes so far.
    public func waitForEventDelivery() async {
        await delivery.drain()
    }
}

/// Lets the catalog, made before the hooks are read, wake their delivery once it exists; holds the
/// delivery the library uses, which ``Library/reloadHooks()`` replaces.
final class EventWake: Sendable {
    private let target = Mutex<HookDelivery?>(nil)

    func set(_ delivery: HookDelivery) { target.withLock { $0 = delivery } }

    func fire() { target.withLock { $0 }?.nudge() }

    /// The delivery in use; set once by `open` before the library exists.
    var current: HookDelivery {
        guard let delivery = target.withLock({ $0 }) else { preconditionFailure("the library's hook delivery is set by open") }
        return delivery
    }
}

extension Library {
    /// Reads the hooks of the library's `config.json` again (a service's SIGHUP): new hooks start at the log's
    /// end, removed ones stop; events already handed to a hook stay acknowledged.
    /// - Throws: `.invalidHooks` naming the file when the new hooks cannot be used (the old ones stay).
    public func reloadHooks() async throws {
        let layout = self.layout
        let hooks = try await runBlocking { try HookConfiguration.read(layout.config) }
        let delivery = HookDelivery(catalog: catalog, layout: layout, hooks: hooks, logger: logger)
        if !hooks.isEmpty { try await runBlocking { try delivery.startNewHooks() } }
        let old = self.delivery
        let retrying = old.keepsRetrying
        old.stopRetrying()
        wake.set(delivery)
        await old.drain()
        if retrying { delivery.keepRetrying() } else { delivery.nudge() }
    }

    /// Makes this process deliver every event to the hooks, whoever made it, for as long as it runs: what is
    /// waiting now (a killed process's, a backing-off hook's), each later event as ``nudgeEventDelivery()``
    /// reports it, and a hook's retry when its backoff ends. For a resident process (`issues serve`).
    package func keepDeliveringEvents() async throws {
        let catalog = self.catalog
        try await runBlocking { try catalog.recoverIfNeeded() }
        delivery.keepRetrying()
    }

    /// Asks for a delivery round without waiting for it: an event another process made was seen in the log.
    package nonisolated func nudgeEventDelivery() {
        delivery.nudge()
    }
}
