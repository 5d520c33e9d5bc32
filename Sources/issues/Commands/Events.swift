import ArgumentParser
import Dispatch
import Foundation
import Newsstand

#if canImport(Glibc)
    import Glibc
#endif

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what happened to the library, oldest first; --follow waits for more.",
        discussion: """
            Kinds: issue.added, issue.available, issue.failed, issue.removed (reason remove or prune), \
            subscription.added, subscription.failing, subscription.gone, subscription.moved, \
            library.low-space. Each event has a cursor (pass the last one seen to --since) and an id that \
            stays the same on every delivery. With --json, one JSON object a line (the shape hooks get). \
            --follow ends with status 0 on Ctrl-C or SIGTERM.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .long, help: ArgumentHelp("Only events after this cursor.", valueName: "cursor"))
    var since: Int64 = 0

    @Flag(name: .long, help: "After the events so far, wait for new ones (until Ctrl-C or SIGTERM).")
    var follow = false

    @Flag(name: .long, help: "Hand the hooks of config.json every event they have not acknowledged, then exit.")
    var deliver = false

    func validate() throws {
        if since < 0 { throw ValidationError("--since must be a cursor (0 or more)") }
        if deliver && follow { throw ValidationError("--deliver and --follow cannot be combined") }
    }

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        if deliver {
            try await library.deliverEvents()
            return
        }
        // Kept alive for the whole run: a released signal source stops handling its signal.
        var sources: [any DispatchSourceSignal] = []
        if follow {
            // Leaving on a signal is the normal end of following: status 0.
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            for number in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                // Lines are written unbuffered (FileHandle), so nothing is lost by leaving at once.
                source.setEventHandler { _exit(0) }
                source.resume()
                sources.append(source)
            }
        }
        for try await event in library.events(since: since, follow: follow) {
            let line = output.json ? try ReportJSON.text(event, compact: true) : Events.text(event)
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        withExtendedLifetime(sources) {}
    }

    /// One line for a person: cursor, time, kind, then what it is about (names escaped for the terminal).
    static func text(_ event: EventReport) -> String {
        var line = "\(event.cursor)  \(event.time)  \(event.kind)"
        if let issue = event.issue { line += "  " + TerminalText.escaped(issue.name) }
        if let subscription = event.subscription { line += "  " + TerminalText.escaped(subscription.name) }
        if let reason = event.reason { line += "  (" + TerminalText.escaped(reason) + ")" }
        if let detail = event.detail { line += "  " + TerminalText.escaped(detail) }
        return line
    }
}
