import Foundation
import NewsstandCore
import NewsstandSubscriptions

/// The scheduler's view of the library: every subscription's next check and why, and one check made at
/// a given time (the scheduler's clock, which tests run simulated).
extension Library {
    /// Every subscription's plan as of `now`, soonest first (paused and gone ones last).
    public func schedule(now: Date = Date()) async throws -> [(subscription: Subscription, plan: CheckPlan)] {
        let subscriptions = try await subscriptions()
        return subscriptions.map { ($0, CheckPlan.plan(for: $0, now: now)) }
            .sorted { ($0.plan.due ?? .distantFuture, $0.subscription.name) < ($1.plan.due ?? .distantFuture, $1.subscription.name) }
    }

    /// Checks the subscription with this identifier as `sync` would, counting the check as made at `now`,
    /// and returns the report with the plan it leaves. Nil when the subscription no longer exists; no report
    /// when it was paused since it was planned (another process paused it): nothing is fetched then. `gate`
    /// is waited on just before the feed's request.
    package func check(
        subscriptionID id: String, now: Date, gate: StartGate? = nil
    ) async -> (report: SyncReport?, next: CheckPlan?)? {
        let store = SubscriptionStore(layout: layout)
        guard var subscription = try? await runBlocking({ try store.load(id) }) else { return nil }
        if subscription.isPaused || subscription.isGone { return (nil, CheckPlan.plan(for: subscription, now: now)) }
        let report = await refresh(subscription, backfill: false, now: now, gate: gate)
        if case .unchanged = report.outcome {
            // Nothing but the status changed (most checks): the plan follows without reading the record again.
            subscription.lastChecked = now
            subscription.lastOutcome = .unchanged
            subscription.failures = 0
            subscription.hints = report.hints
            return (report, CheckPlan.plan(for: subscription, now: now))
        }
        return (report, await plan(subscriptionID: id, now: now)?.plan)
    }
}

extension Library {
    /// The subscription with this identifier and its plan as of `now`, or nil when it no longer exists.
    package func plan(subscriptionID id: String, now: Date) async -> (subscription: Subscription, plan: CheckPlan)? {
        let store = SubscriptionStore(layout: layout)
        guard let subscription = try? await runBlocking({ try store.load(id) }) else { return nil }
        return (subscription, CheckPlan.plan(for: subscription, now: now))
    }

    /// Deletes the temporaries of subscription records and statuses that killed processes left: what the
    /// service does as it starts, and `sync` before its checks.
    package func removeSubscriptionTemporaries() async {
        let catalog = self.catalog
        let store = SubscriptionStore(layout: layout)
        // Housekeeping: a lock that cannot be had now leaves them for the next time.
        try? await runBlocking { try catalog.withLock { store.removeTemporariesOfDeadWriters() } }
    }

    /// The issues with a download that was started and not finished (a stop or a crash interrupted it),
    /// each with the origin of its first unfinished asset: what the service resumes when it starts.
    package func interruptedIssues() async throws -> [(name: String, origin: String)] {
        let catalog = self.catalog
        return try await runBlocking {
            var seen = Set<String>()
            var found: [(name: String, origin: String)] = []
            for marker in try catalog.pendingMarkers() where seen.insert(marker.key).inserted {
                guard let issue = try catalog.record(key: marker.key),
                    let asset = issue.assets.first(where: { $0.state != .failed && !$0.isComplete })
                else { continue }
                found.append((issue.name, URLCredentials.origin(of: asset.url)))
            }
            return found
        }
    }

    /// The origin (scheme, host, port) of the issue's first unfinished asset, or nil when none is left.
    package func downloadOrigin(ofIssueNamed name: String) async -> String? {
        guard let issue = try? await issue(named: name),
            let asset = issue.assets.first(where: { !$0.isComplete })
        else { return nil }
        return URLCredentials.origin(of: asset.url)
    }
}
