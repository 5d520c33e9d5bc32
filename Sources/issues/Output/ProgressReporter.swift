import Foundation
import Newsstand
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Shows download progress on stderr: live bars (bytes, rate, ETA) redrawn in place on a terminal that
/// can move the cursor, plain one-line-per-event output otherwise, with a periodic line for a long
/// transfer so that logs show it moving. It also tallies the bytes each asset fetched, because the
/// library's `DownloadSummary.bytesReceived` counts only assets that finished or failed.
final class ProgressReporter: Sendable {
    /// How progress is shown.
    enum Mode: Sendable, Equatable {
        /// Bars redrawn in place; `unicode` picks block characters over ASCII.
        case live(unicode: Bool)
        /// One line per event, and every `interval` a line per transfer; `columns` clips those periodic
        /// lines on a dumb terminal (nil: not a terminal, nothing to fit).
        case plain(interval: Duration, columns: Int?)
    }

    /// Chooses the mode from stderr and the environment: live bars only on a terminal that is not
    /// `TERM=dumb`; plain lines every 10 s (2 s on a dumb terminal, where someone is watching), or
    /// every `ISSUES_PROGRESS_INTERVAL` seconds when set.
    static func mode(
        isTerminal: Bool = Terminal.stderrIsTerminal,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Mode {
        if isTerminal && !Terminal.isDumb(environment: environment) {
            return .live(unicode: Terminal.localeIsUTF8(environment: environment))
        }
        let seconds = environment["ISSUES_PROGRESS_INTERVAL"].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil }
        let interval = seconds.map { Duration.milliseconds(Int64($0 * 1000)) } ?? .seconds(isTerminal ? 2 : 10)
        return .plain(interval: interval, columns: isTerminal ? Terminal.size(environment: environment).columns : nil)
    }

    /// One live line's figures.
    struct Row {
        var label: String
        var received: Int64 = 0
        var expected: Int64?
        var rate: Double = 0
        var note: String = ""
    }

    /// Bytes one asset fetched in this run, attempt by attempt: a retry that starts again from a
    /// truncated file still fetched the bytes of the attempt before.
    private struct Tally {
        var earlierAttempts: Int64 = 0
        var attemptStart: Int64 = 0
        var attemptReceived: Int64 = 0

        mutating func start(from offset: Int64) {
            earlierAttempts += max(0, attemptReceived - attemptStart)
            attemptStart = offset
            attemptReceived = offset
        }

        func total(onDisk: Int64?) -> Int64 {
            // Progress events come a few times a second; the file on disk has the bytes after the last one.
            let received = max(attemptReceived, onDisk.flatMap { $0 >= attemptStart ? $0 : nil } ?? 0)
            return earlierAttempts + max(0, received - attemptStart)
        }
    }

    private struct State {
        var rows: [String: Row] = [:]
        var order: [String] = []
        var tallies: [String: Tally] = [:]
        var lastPlainLine: [String: ContinuousClock.Instant] = [:]
        var drawnLines = 0
        var lastDraw = ContinuousClock.now - .seconds(1)
        var finished = false
    }

    let mode: Mode
    private let state = Mutex(State())
    private let terminalSize: @Sendable () -> (columns: Int, rows: Int?)

    init(
        mode: Mode = ProgressReporter.mode(),
        terminalSize: @escaping @Sendable () -> (columns: Int, rows: Int?) = {
            Terminal.size()
        }
    ) {
        self.mode = mode
        self.terminalSize = terminalSize
    }

    func handle(_ event: DownloadEvent) {
        let file = event.url.lastPathComponent.isEmpty ? event.assetID : event.url.lastPathComponent
        let label = DisplayWidth.printable("\(event.issueName): \(file)")
        switch mode {
        case .live(let unicode): handleLive(event, label: label, unicode: unicode)
        case .plain(let interval, let columns): handlePlain(event, label: label, interval: interval, columns: columns)
        }
    }

    /// Clears the live area, leaving the cursor at the start of an empty line. Later events draw nothing.
    func finish() {
        state.withLock { state in
            state.finished = true
            guard case .live = mode else { return }
            Terminal.write(ProgressReporter.clear(lines: state.drawnLines), to: STDERR_FILENO)
            state.drawnLines = 0
        }
    }

    /// Bytes fetched in this run by the given assets, from their progress events and the files on disk.
    func bytesFetched(assetIDs: some Sequence<String>, onDisk: (String) -> Int64?) -> Int64 {
        let tallies = state.withLock { $0.tallies }
        return assetIDs.reduce(0) { sum, id in sum + (tallies[id].map { $0.total(onDisk: onDisk(id)) } ?? 0) }
    }

    /// The one line an event leaves in the log (nil for progress, which is shown otherwise).
    static func line(for event: DownloadEvent, label: String) -> String? {
        text(for: event, label: label).map(DisplayWidth.printable)  // reasons quote servers and files
    }

    /// ``line(for:label:)`` within `columns`: an error whole (it must be read, so it may wrap); a `done` line
    /// shortens its label first, so where the file went stays (`…saved as NAME)` even when nothing else fits);
    /// any other line is cut at its end.
    static func fittedLine(for event: DownloadEvent, label: String, columns: Int, ellipsis: String) -> String? {
        guard let line = line(for: event, label: label) else { return nil }
        if event.isFailure { return line }
        let width = columns - 1
        guard case .finished = event.kind, DisplayWidth.of(line) > width else {
            return DisplayWidth.clip(line, to: width, ellipsis: ellipsis)
        }
        let full = DisplayWidth.printable(label)
        guard let start = line.range(of: full) else { return DisplayWidth.clip(line, to: width, ellipsis: ellipsis) }
        let head = String(line[..<start.lowerBound])
        let tail = String(line[start.upperBound...])
        let room = width - DisplayWidth.of(head) - DisplayWidth.of(tail)
        // With no room left for even a cut label, the place is what the line keeps.
        if room >= 2 { return head + DisplayWidth.clip(full, to: room, ellipsis: ellipsis) + tail }
        return head + DisplayWidth.clipLeading(tail, to: width - DisplayWidth.of(head), ellipsis: ellipsis)
    }

    private static func text(for event: DownloadEvent, label: String) -> String? {
        switch event.kind {
        case .started(let from, let expected):
            let size = expected.map { " of \(Format.bytes($0))" } ?? ""
            return from > 0 ? "resuming \(label) at \(Format.bytes(from))\(size)" : "downloading \(label)\(size)"
        case .progress:
            return nil
        case .retrying(let attempt, let delay, let reason):
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            return "retrying \(label) in \(Format.duration(seconds: seconds)) (attempt \(attempt + 1)): \(reason)"
        case .unpacking:
            return "unpacking \(label)"
        case .finished(let asset):
            let place = asset.state == .unpacked ? "unpacked" : "saved as \(asset.fileName ?? "?")"
            return "done \(label) (\(Format.bytes(asset.receivedBytes)), \(place))"
        case .failed(let error):
            // The only line this failure gets: the summary counts it but does not repeat it.
            return "error: \(label): \(error)"
        case .skipped(let reason):
            return "skipped \(label): \(reason)"
        }
    }

    // MARK: - Plain lines

    private func handlePlain(_ event: DownloadEvent, label: String, interval: Duration, columns: Int?) {
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            guard !state.finished else { return nil }
            tally(event, in: &state)
            switch event.kind {
            case .started:
                state.lastPlainLine[event.assetID] = now
            case .progress(let received, let expected, let rate):
                guard now - (state.lastPlainLine[event.assetID] ?? now) >= interval else { return nil }
                state.lastPlainLine[event.assetID] = now
                let line = "\(label): " + ProgressReporter.figures(received, expected, rate)[0]
                return columns.map { DisplayWidth.clip(line, to: $0 - 1, ellipsis: "...") } ?? line
            case .finished, .failed, .skipped:
                state.lastPlainLine[event.assetID] = nil
            case .retrying, .unpacking:
                break
            }
            // On a (dumb) terminal, lines fit its width like the bars do, except an error, to be read whole.
            if let columns { return ProgressReporter.fittedLine(for: event, label: label, columns: columns, ellipsis: "...") }
            return ProgressReporter.line(for: event, label: label)
        }
        if let text { Terminal.error(text) }
    }

    private func tally(_ event: DownloadEvent, in state: inout State) {
        switch event.kind {
        case .started(let from, _):
            state.tallies[event.assetID, default: Tally()].start(from: from)
        case .progress(let received, _, _):
            state.tallies[event.assetID, default: Tally()].attemptReceived = received
        default:
            break
        }
    }

    // MARK: - Live bars

    private func handleLive(_ event: DownloadEvent, label: String, unicode: Bool) {
        state.withLock { state in
            guard !state.finished else { return }
            tally(event, in: &state)
            // Whether the event leaves a line above the bars (a retry, an end).
            var leavesLine = false
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
                leavesLine = true
            case .unpacking:
                state.rows[event.assetID]?.note = "unpacking"
            case .finished, .failed, .skipped:
                state.rows[event.assetID] = nil
                state.order.removeAll { $0 == event.assetID }
                leavesLine = true
            }
            let now = ContinuousClock.now
            guard leavesLine || now - state.lastDraw >= .milliseconds(100) else { return }
            state.lastDraw = now
            let size = terminalSize()
            let frame = ProgressReporter.frame(
                rows: state.order.compactMap { state.rows[$0] }, columns: size.columns, screenRows: size.rows,
                unicode: unicode)
            var text = ProgressReporter.clear(lines: state.drawnLines)
            // Log lines fit like the bars, except an error, which must be read whole (it scrolls away above the
            // live area, so even wrapped it leaves nothing stale behind).
            if leavesLine,
                let line = ProgressReporter.fittedLine(
                    for: event, label: label, columns: size.columns, ellipsis: unicode ? "…" : "...")
            {
                text += line + "\n"
            }
            for line in frame { text += line + "\n" }
            state.drawnLines = frame.count
            Terminal.write(text, to: STDERR_FILENO)
        }
    }

    /// Moves to the start of the first live line and clears to the end of the screen. The `\r` first:
    /// a Ctrl-C echoes `^C` and leaves the cursor two columns in, and clearing from there would keep
    /// the first two characters of the old bar (the `Bi` in `Bi0 done`).
    static func clear(lines: Int) -> String {
        lines > 0 ? "\r\u{1B}[\(lines)A\u{1B}[J" : "\r\u{1B}[J"
    }

    /// The live lines for `rows` on a terminal `columns` wide and `screenRows` high. Every line is at
    /// most `columns - 1` wide: a line that fills the last column leaves some terminals about to wrap,
    /// and a wrapped line breaks the count of lines to move up for the next redraw.
    static func frame(rows: [Row], columns: Int, screenRows: Int?, unicode: Bool) -> [String] {
        let width = max(1, columns - 1)
        // Lines that scroll off the top cannot be redrawn: keep the live area a few lines short of the screen.
        let limit = max(1, min(12, (screenRows ?? 24) - 3))
        let visible = rows.count > limit ? Array(rows.prefix(limit - 1)) : rows
        let naturalLabel = visible.map { DisplayWidth.of($0.label) }.max() ?? 0
        let labelColumn = min(naturalLabel, max(10, width / 3))
        var lines = visible.map { render($0, width: width, labelColumn: labelColumn, unicode: unicode) }
        if rows.count > visible.count {
            let more = (unicode ? "… and " : "... and ") + "\(rows.count - visible.count) more"
            lines.append(DisplayWidth.clip(more, to: width, ellipsis: unicode ? "…" : "..."))
        }
        return lines
    }

    /// The figures after the bar, most detailed first; the renderer takes the first that fits. Single
    /// spaces, so that bytes, rate and ETA all fit beside a bar on an 80-column terminal.
    static func figures(_ received: Int64, _ expected: Int64?, _ rate: Double, note: String = "") -> [String] {
        let got = Format.bytes(received)
        let speed = rate > 0 ? Format.rate(rate) : nil
        guard let expected, expected > 0 else {
            if !note.isEmpty { return ["\(got) \(note)", note] }
            return [[got, speed].compactMap { $0 }.joined(separator: " "), got]
        }
        let fraction = min(1, Double(received) / Double(expected))
        let percent = String(format: "%3.0f%%", fraction * 100)
        let sizes = "\(got)/\(Format.bytes(expected))"
        if !note.isEmpty { return ["\(sizes) \(note)", note] }
        guard let speed else { return ["\(sizes) \(percent)", percent] }
        let eta = "ETA \(Format.duration(seconds: Double(expected - received) / rate))"
        return [
            "\(sizes) \(percent) \(speed) \(eta)", "\(sizes) \(percent) \(speed)", "\(sizes) \(percent)",
            "\(percent) \(speed)", percent,
        ]
    }

    private static func render(_ row: Row, width: Int, labelColumn: Int, unicode: Bool) -> String {
        let ellipsis = unicode ? "…" : "..."
        let label = DisplayWidth.pad(DisplayWidth.clip(row.label, to: labelColumn, ellipsis: ellipsis), to: labelColumn)
        let candidates = figures(row.received, row.expected, row.rate, note: row.note)
        let fraction = row.expected.flatMap { $0 > 0 ? min(1, Double(row.received) / Double($0)) : nil }
        let minimumBar = 8
        for figures in candidates {
            let room = width - labelColumn - 1 - DisplayWidth.of(figures)
            guard let fraction else {
                if room >= 0 { return "\(label) \(figures)" }
                continue
            }
            // The bar takes what is left, up to 40 columns; ASCII adds brackets around it.
            let chrome = unicode ? 1 : 3
            let barWidth = min(40, room - chrome)
            if barWidth >= minimumBar {
                return "\(label) \(bar(fraction, width: barWidth, unicode: unicode)) \(figures)"
            }
        }
        let shortest = candidates.last ?? ""
        return DisplayWidth.clip("\(label) \(shortest)", to: width, ellipsis: ellipsis)
    }

    private static func bar(_ fraction: Double, width: Int, unicode: Bool) -> String {
        let filled = Int(fraction * Double(width))
        if unicode {
            return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        }
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }
}

extension DownloadEvent {
    fileprivate var isFailure: Bool {
        if case .failed = kind { return true }
        return false
    }
}
