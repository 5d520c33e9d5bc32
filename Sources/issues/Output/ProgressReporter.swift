import Foundation
import Newsstand
import Synchronization

/// Shows download progress on stderr: a live bar per active download on a terminal (bytes, rate,
/// ETA), plain one-line-per-event output otherwise.
final class ProgressReporter: Sendable {
    private struct Row {
        var label: String
        var received: Int64 = 0
        var expected: Int64?
        var rate: Double = 0
        var note: String = ""
    }

    private struct State {
        var rows: [String: Row] = [:]
        var order: [String] = []
        var drawnLines = 0
        var lastDraw = ContinuousClock.now - .seconds(1)
    }

    private let isTerminal: Bool
    private let state = Mutex(State())

    init(isTerminal: Bool) {
        self.isTerminal = isTerminal
    }

    func handle(_ event: DownloadEvent) {
        let label =
            "\(event.issueName): \(event.url.lastPathComponent.isEmpty ? event.assetID : event.url.lastPathComponent)"
        if isTerminal {
            handleLive(event, label: label)
        } else if let line = ProgressReporter.line(for: event, label: label) {
            Terminal.error(line)
        }
    }

    /// Clears the live area.
    func finish() {
        guard isTerminal else { return }
        state.withLock { state in
            Terminal.write(clear(lines: state.drawnLines), to: STDERR_FILENO)
            state.drawnLines = 0
        }
    }

    static func line(for event: DownloadEvent, label: String) -> String? {
        switch event.kind {
        case .started(let from, let expected):
            let size = expected.map { " of \(Format.bytes($0))" } ?? ""
            return from > 0 ? "resuming \(label) at \(Format.bytes(from))\(size)" : "downloading \(label)\(size)"
        case .progress:
            return nil
        case .retrying(let attempt, let delay, let reason):
            return
                "retrying \(label) in \(Format.duration(seconds: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)) (attempt \(attempt + 1)): \(reason)"
        case .unpacking:
            return "unpacking \(label)"
        case .finished(let asset):
            let place = asset.state == .unpacked ? "unpacked" : "saved as \(asset.fileName ?? "?")"
            return "done \(label) (\(Format.bytes(asset.receivedBytes)), \(place))"
        case .failed(let error):
            return "failed \(label): \(error)"
        case .skipped(let reason):
            return "skipped \(label): \(reason)"
        }
    }

    private func handleLive(_ event: DownloadEvent, label: String) {
        state.withLock { state in
            var permanent: String?
            switch event.kind {
            case .started(let from, let expected):
                if state.rows[event.assetID] == nil { state.order.append(event.assetID) }
                var row = state.rows[event.assetID] ?? Row(label: label)
                row.received = from
                row.expected = expected ?? row.expected
                row.note = ""
                state.rows[event.assetID] = row
            case .progress(let received, let expected, let rate):
                if var row = state.rows[event.assetID] {
                    row.received = received
                    row.expected = expected ?? row.expected
                    row.rate = rate
                    row.note = ""
                    state.rows[event.assetID] = row
                }
            case .retrying:
                state.rows[event.assetID]?.note = "retrying"
                permanent = ProgressReporter.line(for: event, label: label)
            case .unpacking:
                state.rows[event.assetID]?.note = "unpacking"
            case .finished, .failed, .skipped:
                state.rows[event.assetID] = nil
                state.order.removeAll { $0 == event.assetID }
                permanent = ProgressReporter.line(for: event, label: label)
            }
            let now = ContinuousClock.now
            guard permanent != nil || now - state.lastDraw >= .milliseconds(100) else { return }
            state.lastDraw = now
            var text = clear(lines: state.drawnLines)
            if let permanent { text += permanent + "\n" }
            let visible = state.order.prefix(12)
            for id in visible {
                if let row = state.rows[id] { text += render(row) + "\n" }
            }
            if state.order.count > visible.count { text += "… and \(state.order.count - visible.count) more\n" }
            state.drawnLines = visible.count + (state.order.count > visible.count ? 1 : 0)
            Terminal.write(text, to: STDERR_FILENO)
        }
    }

    private func clear(lines: Int) -> String {
        lines > 0 ? "\u{1B}[\(lines)A\u{1B}[J" : ""
    }

    private func render(_ row: Row) -> String {
        let width = 24
        var bar = String(repeating: " ", count: width)
        var figures = Format.bytes(row.received)
        if let expected = row.expected, expected > 0 {
            let fraction = min(1, Double(row.received) / Double(expected))
            let filled = Int(fraction * Double(width))
            bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            figures += " / \(Format.bytes(expected)) \(String(format: "%3.0f%%", fraction * 100))"
            if row.rate > 0 {
                figures += "  ETA \(Format.duration(seconds: Double(expected - row.received) / row.rate))"
            }
        }
        if row.rate > 0 { figures += "  \(Format.rate(row.rate))" }
        if !row.note.isEmpty { figures += "  \(row.note)" }
        return "\(Format.pad(Format.clip(row.label, 32), 32)) \(bar) \(figures)"
    }
}

#if canImport(Glibc)
    import Glibc
#endif
