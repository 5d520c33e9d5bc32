import ArgumentParser
import Foundation
import Newsstand

struct Subscriptions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List subscriptions: name, format, last check and its outcome, items seen, issues, policies.")

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Write the subscriptions as an OPML file to stdout instead.")
    var opml = false

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let subscriptions = try await library.subscriptions(countingIssues: !opml)
        if opml {
            Terminal.output(OPMLDocument.export(subscriptions), terminator: "")
            return
        }
        if output.json {
            Terminal.output(try ReportJSON.text(library.reports(for: subscriptions), compact: true))
            return
        }
        guard !subscriptions.isEmpty else {
            Terminal.error("no subscriptions in \(library.rootURL.path)")
            return
        }
        let rows = subscriptions.map { subscription -> [String] in
            var policy: [String] = []
            if let keep = subscription.keep { policy.append("keep \(keep)") }
            if !subscription.downloadsAutomatically { policy.append("no download") }
            if subscription.isGone { policy.append("gone") } else if subscription.isPaused { policy.append("paused") }
            let checked = subscription.lastChecked.map { Format.age($0) } ?? "never"
            return [
                subscription.name, subscription.format?.rawValue ?? "?", checked,
                subscription.lastOutcome?.description ?? "-", String(subscription.itemsSeen), String(subscription.issuesHeld ?? subscription.issueNames.count),
                policy.isEmpty ? "-" : policy.joined(separator: ", "), subscription.url.absoluteString,
            ]
        }
        Terminal.output(
            TableRenderer.table(
                header: ["NAME", "FORMAT", "CHECKED", "OUTCOME", "SEEN", "ISSUES", "POLICY", "URL"], rows: rows))
    }
}

struct Unsubscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drop a subscription. Its issues stay unless --remove-issues.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The subscription's name.")
    var name: String

    @Flag(name: .long, help: "Also remove the issues it added (content, partial files and catalog entries).")
    var removeIssues = false

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let removed = try await library.unsubscribe(named: name, removeIssues: removeIssues)
        try? await library.shutdown()
        Terminal.output("unsubscribed \(name.debugDescription)")
        for issue in removed { Terminal.output("  removed \(issue.debugDescription)") }
    }
}

struct Configure: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change a subscription's options.",
        discussion: """
            Only the options given change. A new --keep prunes the subscription's older issues at once (never a \
            pinned one or one in flight); with --dry-run nothing changes and the issues that would go are listed. \
            `issues pause` and `issues unpause` stop and restart syncing.
            """)

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The subscription's name.")
    var name: String

    @Option(name: .long, help: ArgumentHelp("A new name.", valueName: "name"))
    var rename: String?

    @Option(name: .long, help: ArgumentHelp("Keep only this many newest issues.", valueName: "n"))
    var keep: Int?

    @Flag(name: .long, help: "Keep every issue (drop --keep).")
    var keepAll = false

    @Flag(inversion: .prefixedNo, help: "Whether sync downloads new issues.")
    var download: Bool?

    @Option(name: .long, help: ArgumentHelp("A new mapping file.", valueName: "file"))
    var map: String?

    @Flag(name: .long, help: "Drop the mapping.")
    var noMap = false

    @Flag(name: .long, help: "Change nothing; list the issues a new --keep would prune.")
    var dryRun = false

    @OptionGroup var media: MediaChoiceOptions

    @Flag(name: .long, help: "Drop --prefer.")
    var noPrefer = false

    @Flag(name: .long, help: "Drop --max-bytes.")
    var noMaxBytes = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Check the feed this often (15m, 6h, 1d) instead of adapting to how often it publishes.",
            discussion: "The feed's ttl and the server's Cache-Control or Retry-After can still push a check later.",
            valueName: "interval"))
    var every: Interval?

    @Flag(name: .long, help: "Drop --every: adapt to how often the feed publishes.")
    var adaptive = false

    @Option(name: .long, help: TemplateArgument.help)
    var template: String?

    @Flag(name: .long, help: "Drop --template: file new issues as the library's default does.")
    var noTemplate = false

    func validate() throws {
        if keep != nil && keepAll { throw ValidationError("--keep and --keep-all cannot be combined") }
        if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
        if map != nil && noMap { throw ValidationError("--map and --no-map cannot be combined") }
        if dryRun && keep == nil { throw ValidationError("--dry-run goes with --keep") }
        if media.prefer != nil && noPrefer { throw ValidationError("--prefer and --no-prefer cannot be combined") }
        if media.maxBytes != nil && noMaxBytes { throw ValidationError("--max-bytes and --no-max-bytes cannot be combined") }
        if every != nil && adaptive { throw ValidationError("--every and --adaptive cannot be combined") }
        if let every, every.seconds < 60 { throw ValidationError("--every must be at least 1m") }
        if template != nil && noTemplate { throw ValidationError("--template and --no-template cannot be combined") }
        _ = try TemplateArgument.parse(template)
    }

    func run() async throws {
        var change = SubscriptionChange(name: rename, downloadsAutomatically: download)
        if let keep { change.keep = .some(keep) }
        if keepAll { change.keep = .some(nil) }
        if let map { change.mapping = .some(try CommandFiles.read(map, what: "mapping")) }
        if noMap { change.mapping = .some(nil) }
        if let prefer = media.prefer { change.preferredType = .some(prefer) }
        if noPrefer { change.preferredType = .some(nil) }
        if let maxBytes = media.maxBytes { change.maxBytes = .some(maxBytes.bytes) }
        if noMaxBytes { change.maxBytes = .some(nil) }
        if let every { change.checkEvery = .some(every.duration) }
        if adaptive { change.checkEvery = .some(nil) }
        if let template = try TemplateArgument.parse(template) { change.template = .some(template) }
        if noTemplate { change.template = .some(nil) }
        let library = try await libraryOptions.open(create: false)
        if dryRun, let keep {
            guard let subscription = try await library.subscription(named: name) else {
                throw NewsstandError(.subscriptionNotFound, "no subscription named \(name.debugDescription)")
            }
            let report = try await library.prune(PrunePolicy(keep: keep, subscriptionID: subscription.id), dryRun: true)
            Terminal.output(PruneOutput.text(report, budget: nil))
            return
        }
        let subscription = try await library.changeSubscription(named: name, change)
        Terminal.output("changed \(subscription.name.debugDescription)")
        if change.template != nil {
            // A template decides where an issue goes when it is added: moving the files of issues already there
            // would break the paths people and players keep.
            Terminal.output("the template applies to new issues; existing issues keep their folders")
        }
        // The new keep applies now, not at the next sync that happens to add an issue.
        if let keep {
            let report = try await library.prune(PrunePolicy(keep: keep, subscriptionID: subscription.id))
            if !report.removed.isEmpty || !report.spared.isEmpty {
                Terminal.output(PruneOutput.text(report, budget: nil))
            }
        }
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause subscriptions: `sync` skips them unless named.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "Subscription names.")
    var names: [String]

    func run() async throws {
        try await Pause.set(paused: true, names, libraryOptions)
    }

    /// Pauses or unpauses each named subscription, one line each.
    static func set(paused: Bool, _ names: [String], _ libraryOptions: LibraryOptions) async throws {
        let library = try await libraryOptions.open(create: false)
        for name in names {
            let subscription = try await library.changeSubscription(named: name, SubscriptionChange(isPaused: paused))
            Terminal.output("\(paused ? "paused" : "unpaused") \(subscription.name.debugDescription)")
        }
    }
}

struct Unpause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unpause subscriptions (also one marked gone).")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "Subscription names.")
    var names: [String]

    func run() async throws {
        try await Pause.set(paused: false, names, libraryOptions)
    }
}
