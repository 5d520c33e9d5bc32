import Foundation

/// The per-host politeness rule, shared by feed checks and downloads: at most `concurrent` requests at a
/// time to one origin (scheme, host and port), and starts at least `spacing` apart. Plain state: the
/// scheduler's dispatcher is its only user and decides starts from it, so nothing here waits.
struct HostSlots {
    var concurrent = 2
    var spacing: TimeInterval = 1
    private var inFlight: [String: Int] = [:]
    private var lastStart: [String: Date] = [:]

    init(concurrent: Int, spacing: TimeInterval) {
        self.concurrent = concurrent
        self.spacing = spacing
    }

    /// When a request to `host` may start, at or after `now`: `now` itself when it may start at once,
    /// nil while the host has `concurrent` requests in flight (a finish frees a slot).
    func earliestStart(_ host: String, now: Date) -> Date? {
        if inFlight[host, default: 0] >= concurrent { return nil }
        guard let last = lastStart[host] else { return now }
        return max(now, last + spacing)
    }

    mutating func started(_ host: String, at time: Date) {
        inFlight[host, default: 0] += 1
        lastStart[host] = time
    }

    /// A started job's first request leaves at `time`: later starts are spaced from it.
    mutating func requestLeft(_ host: String, at time: Date) {
        lastStart[host] = max(lastStart[host] ?? time, time)
    }

    /// Takes the next start `host` allows at or after `now` for a request within a job that already holds a
    /// slot (the next asset of an issue being downloaded), and returns it; later starts keep their spacing
    /// after it.
    mutating func reserve(_ host: String, now: Date) -> Date {
        let at = lastStart[host].map { max(now, $0 + spacing) } ?? now
        lastStart[host] = at
        return at
    }

    mutating func finished(_ host: String) {
        inFlight[host, default: 1] -= 1
        if inFlight[host] == 0 { inFlight[host] = nil }
    }

    func inFlightCount(_ host: String) -> Int { inFlight[host, default: 0] }
}
