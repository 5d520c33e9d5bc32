import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The process's two streams: results on stdout, progress and errors on stderr.
enum Terminal {
    static let logger: Logger = {
        var logger = Logger(label: "issues") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = ProcessInfo.processInfo.environment["ISSUES_DEBUG"] == nil ? .warning : .debug
        return logger
    }()

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Writes `text` and a newline to stdout in one go.
    static func output(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes `text` and a newline to stderr.
    static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return }  // stdout closed (e.g. `| head`): nothing useful left to do
                offset += n
            }
        }
    }
}

/// Human figures: sizes in binary units, rates, durations.
enum Format {
    static func bytes(_ value: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024, unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: amount >= 100 ? "%.0f %@" : "%.1f %@", amount, units[unit])
    }

    static func rate(_ bytesPerSecond: Double) -> String {
        bytes(Int64(bytesPerSecond)) + "/s"
    }

    static func duration(seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let total = Int(seconds.rounded())
        let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%02d:%02d", m, s)
    }

    /// Cuts `text` to `width` characters with an ellipsis.
    static func clip(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(0, width - 1))) + "…"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        let count = text.count
        return count >= width ? text : text + String(repeating: " ", count: width - count)
    }
}
