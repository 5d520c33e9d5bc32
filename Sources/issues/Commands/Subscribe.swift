import ArgumentParser
import Foundation
import Newsstand

struct Subscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Subscribe to a feed: its newest items become issues, and `issues sync` adds new ones.",
        discussion: """
            Reads RSS 2.0 (with iTunes podcast tags), Atom 1.0, JSON Feed 1.0/1.1, the issues catalog \
            (what `issues export` writes), and any publisher's JSON API through --map FILE. An HTML page \
            is followed to the feed it links. With --opml FILE, subscribes to every feed of an OPML file \
            (a bad entry is reported, the others go on).
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var run: DownloadRunOptions
    @OptionGroup var tls: TLSOptions

    @Argument(help: "The feed's URL (http or https).")
    var url: String?

    @Option(name: .long, help: ArgumentHelp("The subscription's name (default: the feed's title).", valueName: "name"))
    var name: String?

    @Option(name: .long, help: ArgumentHelp("A mapping (JSON) for a publisher's own JSON API.", valueName: "file"))
    var map: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How many of the feed's newest items become issues now: a number, or `all`.", valueName: "n|all"))
    var initial: String = "1"

    @Option(name: .long, help: ArgumentHelp("Add the items dated on or after this day instead.", valueName: "date"))
    var since: IssueDate?

    @Option(name: .long, help: ArgumentHelp("Keep only this many newest issues; sync prunes older ones.", valueName: "n"))
    var keep: Int?

    @Flag(name: .long, help: "Add issues without downloading their assets (now and on every sync).")
    var noDownload = false

    @OptionGroup var media: MediaChoiceOptions

    @Option(name: .long, help: TemplateArgument.help)
    var template: String?

    @Option(name: .long, help: ArgumentHelp("Subscribe to every feed of an OPML file (- for stdin).", valueName: "file"))
    var opml: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "A request header sent with every fetch of the feed, e.g. 'Cookie: session=…' (repeatable).",
            discussion: """
                Kept in the library's credentials file (mode 0600), never shown in full; Authorization and \
                Cookie go to the feed's own origin only. A password in the URL (https://user:pass@host/feed) \
                is kept there too and sent as Basic authentication to that origin only.
                """,
            valueName: "name: value"))
    var headers: [String] = []

    func validate() throws {
        if (url == nil) == (opml == nil) { throw ValidationError("give either a feed URL or --opml FILE") }
        if let url { do { _ = try AssetRequest.parseURL(url) } catch let e as NewsstandError { throw ValidationError(e.message) } }
        if initial != "all", Int(initial).map({ $0 < 0 }) ?? true {
            throw ValidationError("--initial takes a number of items or `all` (got \(initial.debugDescription))")
        }
        if since != nil, initial != "1" { throw ValidationError("--since and --initial cannot be combined") }
        if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
        do {
            _ = try HeaderLines.parse(headers)
        } catch let error as NewsstandError {
            throw ValidationError("--header: \(error.message)")
        }
        _ = try TemplateArgument.parse(template)
        if opml != nil, (name != nil || map != nil) {
            throw ValidationError("--name and --map apply to one feed, not to --opml")
        }
    }

    func run() async throws {
        let mapping = try map.map { try CommandFiles.read($0, what: "mapping") }
        let initialItems: InitialItems = since.map { .since($0) } ?? (initial == "all" ? .all : .newest(Int(initial) ?? 1))
        var options = SubscribeOptions(
            name: name, mapping: mapping, initial: initialItems, keep: keep, downloadsAutomatically: !noDownload,
            headers: try HeaderLines.parse(headers))
        options.mediaPolicy = MediaPolicy(preferredType: media.prefer, maxBytes: media.maxBytes?.bytes)
        options.template = try TemplateArgument.parse(template)
        let (library, downloadOptions) = try await libraryOptions.openForDownloads(run, tls)
        var added: [String] = []
        var failures = 0
        if let opml {
            let data = try CommandFiles.read(opml, what: "OPML file")
            for entry in try await library.subscribe(opml: data, options: options) {
                switch entry.result {
                case .success(let report) where entry.alreadySubscribed != nil:
                    Terminal.output("already subscribed \(report.subscription.debugDescription)\(entry.url.map { " to \($0.absoluteString)" } ?? "")")
                case .success(let report):
                    SyncOutput.subscribed(report, url: entry.url)
                    added += report.keptIssues
                case .failure(let error):
                    failures += 1
                    Terminal.error("error: \(entry.title.map { "\($0.debugDescription): " } ?? "")\(error.message)")
                }
            }
        } else if let url {
            do {
                let report = try await library.subscribe(to: try AssetRequest.parseURL(url), options: options)
                SyncOutput.subscribed(report, url: nil)
                added = report.keptIssues
            } catch {
                try? await library.shutdown()
                throw error
            }
        }
        if !noDownload, !added.isEmpty {
            let names = added
            try await DownloadSession.run(library: library) { consume in
                try await library.download(issues: names, options: downloadOptions, consume)
            }
        } else {
            try? await library.shutdown()
        }
        if failures > 0 { throw ExitCode.failure }
    }
}

/// Reads a file named on the command line (`-` for stdin), with an `error:` naming it when it cannot.
enum CommandFiles {
    static func read(_ path: String, what: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw NewsstandError(.io, "cannot read the \(what) \(path): \((error as NSError).localizedDescription)")
        }
    }
}
