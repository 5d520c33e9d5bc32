import ArgumentParser
import Foundation
import Newsstand
import Synchronization

/// `--library`, shared by every command.
struct LibraryOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The library folder.",
            discussion: "Default: $ISSUES_LIBRARY, else $XDG_DATA_HOME/issues, else ~/.local/share/issues.",
            valueName: "dir"),
        completion: .directory)
    var library: String?

    @Flag(
        name: [.short, .customLong("verbose")],
        help: ArgumentHelp(
            "Log each request and its answer to stderr (-vv: also ranges and retries).",
            discussion: "ISSUES_LOG_LEVEL (info, debug, trace, …) sets the level without the flag."))
    var verbose: Int

    /// The folder to use: the option, then `$ISSUES_LIBRARY`, then `$XDG_DATA_HOME/issues`, then
    /// `~/.local/share/issues` (XDG says to ignore a relative `XDG_DATA_HOME`).
    func resolvedURL(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        if let library, !library.isEmpty {
            return URL(fileURLWithPath: library, isDirectory: true, relativeTo: cwd).standardizedFileURL
        }
        if let value = environment["ISSUES_LIBRARY"], !value.isEmpty {
            return URL(fileURLWithPath: value, isDirectory: true, relativeTo: cwd).standardizedFileURL
        }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("issues", isDirectory: true)
        }
        guard let home = environment["HOME"], !home.isEmpty else {
            throw NewsstandError(
                .libraryUnavailable, "no library folder: pass --library DIR or set ISSUES_LIBRARY (HOME is not set)")
        }
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
            ".local/share/issues", isDirectory: true)
    }

    /// Opens the library for a command that downloads: the config files' settings (CA files, proxies,
    /// headers, jobs, segments, rate) under what the command line gives.
    /// - Returns: The library and the options of its download runs.
    /// - Throws: `.invalidConfiguration` naming a bad config file and line, or what opening throws.
    func openForDownloads(_ run: DownloadRunOptions, _ tls: TLSOptions) async throws -> (Library, DownloadOptions) {
        let (configuration, download) = try downloadSettings(run, tls)
        return (try await open(configuration: configuration), download)
    }

    /// The library's configuration and the download options: the command line over the config files. A
    /// service reads them again on SIGHUP.
    func downloadSettings(_ run: DownloadRunOptions, _ tls: TLSOptions) throws -> (Library.Configuration, DownloadOptions) {
        let settings = try Settings.load(library: resolvedURL()).overridden(by: run, tls: tls)
        return (settings.applied(to: run.configuration), settings.downloadOptions(run))
    }

    /// Opens the library. Read-only commands pass `create: false`, so a mistyped `--library` is an error
    /// naming the path instead of a new empty library.
    func open(configuration: Library.Configuration = Library.Configuration(), create: Bool = true) async throws
        -> Library
    {
        let library = try await Library.open(
            at: resolvedURL(), configuration: configuration, logger: Terminal.logger(verbosity: verbose),
            createIfMissing: create)
        LibraryOptions.opened.withLock { $0.append(library) }
        return library
    }

    /// The libraries this run opened: before the process exits, their hooks are handed the events of its
    /// changes (``waitForEventDelivery()``).
    private static let opened = Mutex<[Library]>([])

    static func waitForEventDelivery() async {
        for library in opened.withLock({ $0 }) { await library.waitForEventDelivery() }
    }

    /// Closes every opened library's catalog, once the command is done with it.
    static func closeCatalogs() {
        for library in opened.withLock({ $0 }) { library.closeCatalog() }
    }
}

/// `--json`, for the commands that can print machine-readable output.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON value to stdout instead of text.")
    var json = false
}

/// Options of the commands that download.
struct DownloadRunOptions: ParsableArguments {
    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "How many assets to download at once.",
            discussion: "Default: a config file's \"jobs\", else 4.", valueName: "jobs"))
    var jobs: Int?

    @Flag(name: .long, help: "Keep archives in the issue folder after unpacking them.")
    var keepArchive = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stop unpacking an archive past this size.",
            discussion: "Bytes, or a number with K, M, G or T (powers of 1024; KB, MB, GB, TB are powers of 1000).",
            valueName: "size"))
    var maxUnpackedBytes = ByteSize(bytes: UnpackLimits.default.maxTotalBytes)

    @Option(name: .long, help: ArgumentHelp("Stop unpacking an archive past this many entries.", valueName: "count"))
    var maxEntries: Int = UnpackLimits.default.maxEntries

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Stop unpacking an archive that expands more than this many times its own size.",
            discussion: "Applied once the unpacked data passes 64 MiB, so small well-compressed archives pass.",
            valueName: "ratio"))
    var maxUnpackRatio: Int64 = UnpackLimits.default.maxExpansionRatio

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Give up on an attempt that receives less than this over --stall-seconds (0: never).",
            discussion: "As curl's --speed-limit. Bytes, or a number with K, M, G or T.",
            valueName: "size"))
    var stallBytes = ByteSize(bytes: StallLimit.default.minimumBytes)

    @Option(
        name: .long,
        help: ArgumentHelp("The window --stall-bytes is measured over, in seconds.", valueName: "seconds"))
    var stallSeconds: Int = Int(StallLimit.default.window.components.seconds)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Give up on an asset after this many attempts in a row without progress.", valueName: "count"))
    var retries: Int = RetryPolicy().maxAttemptsWithoutProgress

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Receive at most this many bytes per second, across all downloads of the run.",
            discussion: "Bytes, or a number with K, M, G or T (as for --max-unpacked-bytes): 500K, 2M.",
            valueName: "rate"))
    var limitRate: ByteSize?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Fetch each large asset over up to this many connections, one byte range each.",
            discussion: """
                For servers that cap each connection. Only assets of at least 8 MiB from a server that \
                honours ranges and names a version (ETag or Last-Modified) are split, into ranges of at \
                least 4 MiB, and the other connections open only if the first is capped. 1 turns it off. \
                By default it is automatic: up to 4 for an asset of 64 MiB or more.
                """,
            valueName: "count"))
    var segments: Int?

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Do not flush finished files and unpacked trees to disk before recording them.",
            discussion: "Faster on slow disks; a power cut (not a crash or kill -9) may then lose recent downloads."))
    var noFsync = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Do not make covers when issues finish downloading.",
            discussion: "`issues covers` makes them later. The sidecar (issue.json) is written either way."))
    var noCovers = false

    func validate() throws {
        if let jobs {
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1 (got \(jobs))") }
            guard jobs <= 256 else { throw ValidationError("--jobs must be at most 256 (got \(jobs))") }
        }
        guard maxUnpackedBytes.bytes > 0 else { throw ValidationError("--max-unpacked-bytes must be positive") }
        guard maxEntries > 0 else { throw ValidationError("--max-entries must be positive") }
        guard maxUnpackRatio > 0 else { throw ValidationError("--max-unpack-ratio must be positive") }
        guard retries >= 1 else { throw ValidationError("--retries must be at least 1") }
        guard stallBytes.bytes >= 0 else { throw ValidationError("--stall-bytes must not be negative") }
        guard (1...86_400).contains(stallSeconds) else {
            throw ValidationError("--stall-seconds must be between 1 and 86400 (got \(stallSeconds))")
        }
        if let limitRate, limitRate.bytes < 1 { throw ValidationError("--limit-rate must be positive") }
        if let segments, !(1...16).contains(segments) {
            throw ValidationError("--segments must be between 1 and 16 (got \(segments))")
        }
    }

    var configuration: Library.Configuration {
        var configuration = Library.Configuration()
        configuration.unpackLimits = UnpackLimits(
            maxTotalBytes: maxUnpackedBytes.bytes, maxEntries: maxEntries, maxExpansionRatio: maxUnpackRatio)
        configuration.retry.maxAttemptsWithoutProgress = retries
        configuration.stallLimit =
            stallBytes.bytes == 0
            ? nil : StallLimit(minimumBytes: stallBytes.bytes, window: .seconds(stallSeconds))
        configuration.syncDownloads = !noFsync
        // The image libraries live in NewsstandCovers; the library calls them through this seam.
        if !noCovers { configuration.coverMaker = CoverWorkerClient.shared }
        return configuration
    }

}

extension IssueDate: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(argument)
    }
}
