import Foundation
import Newsstand
import NewsstandCore
import NewsstandSubscriptions
import Testing

/// The scheduler's rule, one case per reason: what `issues schedule` explains is what the service does.
@Suite(.timeLimit(.minutes(1))) struct CheckPlanTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// A subscription last checked an hour ago with `perWeek` items a week over the last four weeks.
    static func subscription(perWeek: Int, lastChecked: Date? = now - 3600) -> Subscription {
        let items = (0..<(perWeek * 4)).map { n -> SubscriptionItem in
            let day = IssueDate(now - Double(n) * (26 * 86_400 / Double(max(perWeek * 4, 1))), timeZone: .gmt)
            return SubscriptionItem(id: "item-\(n)", date: day, firstSeen: day)
        }
        return Subscription(
            id: "0123456789abcdef", name: "Feed", url: URL(fileURLWithPath: "/feed.xml"),
            downloadsAutomatically: false, isPaused: false, isGone: false, created: now - 86_400 * 30, previousURLs: [],
            lastChecked: lastChecked, lastOutcome: .unchanged, items: items)
    }

    @Test func aWeekDividedByItemsPerWeekClampedBetweenAQuarterHourAndADay() {
        let daily = CheckPlan.plan(for: Self.subscription(perWeek: 7), now: Self.now)
        #expect(daily.reason == .adaptive && daily.interval == .seconds(86_400))
        let often = CheckPlan.plan(for: Self.subscription(perWeek: 28), now: Self.now)
        #expect(often.interval == .seconds(6 * 3600))
        #expect(often.due == Self.now - 3600 + 6 * 3600)
        let flood = CheckPlan.plan(for: Self.subscription(perWeek: 2000), now: Self.now)
        #expect(flood.interval == CheckPlan.shortest)
        let silent = CheckPlan.plan(for: Self.subscription(perWeek: 0), now: Self.now)
        #expect(silent.interval == CheckPlan.longest)
        #expect(silent.explanation.contains("0.0 items a week"))
    }

    @Test func neverCheckedIsDueNowAndPausedOrGoneIsNeverDue() {
        let fresh = CheckPlan.plan(for: Self.subscription(perWeek: 7, lastChecked: nil), now: Self.now)
        #expect(fresh.reason == .firstCheck && fresh.due == Self.now)
        var paused = Self.subscription(perWeek: 7)
        paused.isPaused = true
        #expect(CheckPlan.plan(for: paused, now: Self.now).due == nil)
        #expect(CheckPlan.plan(for: paused, now: Self.now).reason == .paused)
        paused.isGone = true
        #expect(CheckPlan.plan(for: paused, now: Self.now).reason == .gone)
    }

    @Test func configuredIntervalWinsOverAdaptingButNotOverTheFeedsTTL() {
        var subscription = Self.subscription(perWeek: 7)
        subscription.checkEvery = .seconds(1800)
        let every = CheckPlan.plan(for: subscription, now: Self.now)
        #expect(every.reason == .every && every.due == Self.now - 3600 + 1800)
        subscription.hints.ttlMinutes = 120
        let ttl = CheckPlan.plan(for: subscription, now: Self.now)
        #expect(ttl.reason == .ttl && ttl.due == Self.now - 3600 + 7200)
        #expect(ttl.explanation.contains("ttl"))
    }

    @Test func theServersHintsOnlyPushLater() {
        var subscription = Self.subscription(perWeek: 28)
        subscription.hints = FeedHints(notBefore: Self.now + 100, notBeforeReason: .fresh)
        #expect(CheckPlan.plan(for: subscription, now: Self.now).reason == .adaptive)
        subscription.hints = FeedHints(notBefore: Self.now + 86_400, notBeforeReason: .retryAfter)
        let asked = CheckPlan.plan(for: subscription, now: Self.now)
        #expect(asked.reason == .serverAsked && asked.due == Self.now + 86_400)
        #expect(asked.explanation.contains("Retry-After"))
    }

    @Test func failuresBackOffDoublingWithJitterCappedAtADay() throws {
        var previous: Duration = .zero
        for failures in 1...10 {
            var subscription = Self.subscription(perWeek: 28)
            subscription.failures = failures
            let plan = CheckPlan.plan(for: subscription, now: Self.now)
            #expect(plan.reason == .backoff)
            let interval = try #require(plan.interval)
            let base = min(900.0 * Double(1 << (failures - 1)), 86_400)
            #expect(interval.timeInterval >= base && interval.timeInterval <= min(base * 1.2, 86_400))
            #expect(interval >= previous)
            previous = interval
            // The same plan every time it is computed: `schedule` shows what the service will do.
            #expect(CheckPlan.plan(for: subscription, now: Self.now) == plan)
        }
        #expect(previous == CheckPlan.longest)
    }
}
