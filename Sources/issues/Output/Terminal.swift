import Foundation
import Newsstand
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The process's two streams: results on stdout, progress and errors on stderr.
enum Terminal {
    /// The library's logger: warnings only, `-v` (or `ISSUES_LOG_LEVEL=info`) each request and its
    /// answer, `-vv` (`debug`) ranges and retries too, `trace` AsyncHTTPClient's own log. The flag and the
    /// variable each raise the level; the more verbose wins. `ISSUES_DEBUG` still means debug.
    static func logger(
        verbosity: Int, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Logger {
        var level: Logger.Level = environment["ISSUES_DEBUG"] == nil ? .warning : .debug
        if let name = environment["ISSUES_LOG_LEVEL"]?.lowercased(), let asked = Logger.Level(rawValue: name) {
            level = min(level, asked)
        }
        if verbosity >= 2 { level = min(level, .debug) } else if verbosity == 1 { level = min(level, .info) }
        var logger = Logger(label: "issues") { _ in TerminalLogHandler() }
        logger.logLevel = level
        return logger
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// The size of the terminal on stderr: `COLUMNS` / `LINES` when set to a positive number (as Python's
    /// `shutil.get_terminal_size` does, so a user or a test can force a width), else what the terminal
    /// reports (`TIOCGWINSZ`), else 80 columns and no known height.
    static func size(environment: [String: String] = ProcessInfo.processInfo.environment) -> (
        columns: Int, rows: Int?
    ) {
        var window = winsize()
        let known = ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &window) == 0
        func positive(_ key: String) -> Int? {
            environment[key].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        }
        let columns = positive("COLUMNS") ?? (known && window.ws_col > 0 ? Int(window.ws_col) : 80)
        let rows = positive("LINES") ?? (known && window.ws_row > 0 ? Int(window.ws_row) : nil)
        return (columns, rows)
    }

    /// True when `TERM` is `dumb` or unset: such a terminal cannot move the cursor, so it gets plain lines.
    static func isDumb(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        let term = environment["TERM"] ?? ""
        return term.isEmpty || term == "dumb"
    }

    /// True when the locale's character set is UTF-8 (the first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set,
    /// the order POSIX gives them); otherwise block characters and `…` may show as garbage, so use ASCII.
    static func localeIsUTF8(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        let lowered = locale.lowercased()
        return lowered.contains("utf-8") || lowered.contains("utf8")
    }

    /// Writes `text` and a newline to stdout in one go.
    static func output(_ text: String, terminator: String = "\n") {
        write(text + terminator, to: STDOUT_FILENO)
    }

    /// Writes `text` and a newline to stderr.
    static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    static func write(_ text: String, to fd: Int32) {
        // Every line the command writes passes here: a URL's password is hidden whatever printed it.
        // On stderr (errors, warnings, `-v` request lines) token-like query values are hidden too; stdout keeps
        // URLs whole, as `export` and `list --json` must give signed URLs back.
        var text = fd == STDERR_FILENO ? URLCredentials.redactSecrets(text) : URLCredentials.redact(text)
        // A closed stdout (e.g. `| head`) leaves nothing useful to do: the error is dropped.
        text.withUTF8 { _ = POSIX.writeAllOrErrno(fd, UnsafeRawBufferPointer($0)) }
    }
}

/// Human figures: sizes in binary units, rates, durations.
enum Format {
    static func bytes(_ value: Int64) -> String {
        ByteFormat.binary(value)
    }

    static func rate(_ bytesPerSecond: Double) -> String {
        bytes(Int64(bytesPerSecond)) + "/s"
    }

    static func duration(seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        // Saturates: Int(_:) traps on a Double past Int.max (an ETA from a rate of almost nothing).
        let total = seconds.rounded() < Double(Int.max) ? Int(seconds.rounded()) : Int.max
        let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
        // The hours by interpolation: `%d` takes a 32-bit int and would print a huge count wrapped.
        return h > 0 ? "\(h):" + String(format: "%02d:%02d", m, s) : String(format: "%02d:%02d", m, s)
    }

    /// How long ago `date` was, roughly: `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
    static func age(_ date: Date, now: Date = Date()) -> String {
        let seconds = max(0, now.timeIntervalSince(date))
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return "\(Int(seconds / 60)) min ago"
        case ..<86400: return "\(Int(seconds / 3600)) h ago"
        default:
            let days = Int(seconds / 86400)
            return "\(days) day\(days == 1 ? "" : "s") ago"
        }
    }

    /// Cuts `text` to `width` terminal columns with an ellipsis.
    static func clip(_ text: String, _ width: Int) -> String {
        DisplayWidth.clip(text, to: width)
    }

    /// Pads `text` with spaces to `width` terminal columns.
    static func pad(_ text: String, _ width: Int) -> String {
        DisplayWidth.pad(text, to: width)
    }
}

/// Log lines on stderr through ``Terminal/error(_:)`` (so credentials in them are hidden like any other
/// output): `issues: info: GET https://…`. No timestamps: a terminal or journald adds its own.
struct TerminalLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let (level, message) = (event.level, event.message)
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let suffix = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        Terminal.error("issues: \(level): \(message)\(suffix)")
    }
}
