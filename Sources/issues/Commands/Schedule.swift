import ArgumentParser
import Foundation
import Newsstand

struct Schedule: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show when each subscription is checked next, and why.",
        discussion: """
            For each subscription: its last check and what came of it, its next check and the reason \
            for that time: adaptive (a week divided by the feed's items per week, between 15 minutes and a \
            day), every (configure --every), ttl (the feed's own), server asked (Cache-Control, Expires or \
            Retry-After), backoff (failed checks in a row), first check, paused or gone. `issues serve` \
            checks at these times; a manual `issues sync` does not move them.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let now = Date()
        let schedule = try await library.schedule(now: now)
        if output.json {
            Terminal.output(try ReportJSON.text(schedule.map { ScheduleReport($0.subscription, plan: $0.plan) }))
            return
        }
        if schedule.isEmpty {
            Terminal.output("no subscriptions; add one with `issues subscribe URL`")
            return
        }
        let rows = schedule.map { entry -> [String] in
            let next: String
            if let due = entry.plan.due {
                next = due <= now ? "due now" : "in \(Duration.seconds(Int64(due.timeIntervalSince(now).rounded(.up))).shortText)"
            } else {
                next = "never"
            }
            let last = entry.subscription.lastChecked.map { Format.age($0) } ?? "never"
            let outcome = entry.subscription.lastOutcome.map { $0.isFailure ? "failed" : $0.description } ?? "-"
            return [entry.subscription.name, last, outcome, next, entry.plan.explanation]
        }
        Terminal.output(
            TableRenderer.table(header: ["SUBSCRIPTION", "CHECKED", "OUTCOME", "NEXT", "WHY"], rows: rows))
    }
}
