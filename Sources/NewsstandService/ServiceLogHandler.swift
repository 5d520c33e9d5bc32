import Foundation
import Glibc
import Logging
import Newsstand
import NewsstandSubscriptions

/// The service's log: one line per event on stderr, each written with one `write(2)` so lines from several
/// tasks never interleave. Text carries a timestamp unless journald already adds one (`JOURNAL_STREAM` set,
/// as systemd does for a unit's stderr); `json` gives one JSON object a line for a log shipper.
public struct ServiceLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let format: Format
    let timestamps: Bool

    public init(format: Format, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.format = format
        self.timestamps = environment["JOURNAL_STREAM"].map(\.isEmpty) ?? true
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        var line: String
        switch format {
        case .json:
            var object: [String: String] = ["level": event.level.rawValue, "message": "\(event.message)"]
            object["time"] = Date().formatted(.iso8601)
            for (key, value) in all where object[key] == nil { object[key] = "\(value)" }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        case .text:
            line = timestamps ? Date().formatted(.iso8601) + " " : ""
            line += "\(event.level): \(event.message)"
            if !all.isEmpty {
                line += " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
            // One event, one line: a newline in a feed's title must not forge a second entry.
            line = line.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        }
        // The journal is a log like any other: no password or token-like query value reaches it.
        let bytes = Array((URLCredentials.redactSecrets(line) + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

extension SchedulerEvent {
    /// The log line of a scheduler event and its level.
    public var logLine: (level: Logger.Level, message: String) {
        switch self {
        case .checking(let name, _, _, _):
            return (.debug, "checking \(name.debugDescription)")
        case .checked(let name, let report, let next):
            let outcome: String
            switch report.outcome {
            case .unchanged: outcome = "unchanged"
            case .updated: outcome = "\(report.addedIssues.count) new issue\(report.addedIssues.count == 1 ? "" : "s")"
            case .failed(let error): outcome = "failed: \(error.message)"
            }
            let plan = next.map { plan in
                plan.due.map { "; next check \($0.formatted(.iso8601)) (\(plan.explanation))" } ?? "; \(plan.explanation)"
            } ?? ""
            if case .failed = report.outcome { return (.warning, "\(name.debugDescription): \(outcome)\(plan)") }
            return (.info, "\(name.debugDescription): \(outcome)\(plan)")
        case .downloading(let issue, _, _):
            return (.info, "downloading \(issue.debugDescription)")
        case .downloaded(let issue, let summary, let error):
            if let error { return (.warning, "\(issue.debugDescription): \(error.message)") }
            if let summary, !summary.failed.isEmpty {
                return (.warning, "\(issue.debugDescription): \(summary.failed.count) asset(s) failed: \(summary.failed.values.sorted().joined(separator: "; "))")
            }
            return (.info, "downloaded \(issue.debugDescription)")
        }
    }
}
