import ArgumentParser
import Foundation
import Newsstand
import NewsstandCovers
import Synchronization

struct Covers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the covers of available issues (cover.<ext>, cover-256.jpg, cover-1024.jpg in each folder).",
        discussion: """
            From the feed's image of the item, else the content (an EPUB's declared cover, the first image of a \
            CBZ or ZIP in name order, page 1 of a PDF), else a placeholder (title and date on the publication's \
            colour). An image over 100 megapixels or 16 MiB, or a corrupt one, is refused with its reason kept \
            (shown by `show`) and the next source used. Issues that have a cover keep it unless --refresh. \
            Downloads make covers by themselves (unless --no-covers).
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Argument(help: "The issues' names (default: every available issue).", completion: IssueNameCompletion.kind)
    var names: [String] = []

    @Flag(name: .long, help: "Make the covers again, even where there is one.")
    var refresh = false

    /// One line of `--json`: the issue and its cover, or why none was made.
    struct Outcome: Encodable {
        var name: String
        var cover: CoverReport?
        var error: String?
        /// How long making this cover took (absent when it was kept): what `make bench` takes its median from.
        var milliseconds: Double?
    }

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let maker = TimedCoverMaker()
        let outcomes = try await library.makeCovers(
            issues: names.isEmpty ? nil : names, refresh: refresh, maker: maker)
        let timings = maker.timings.withLock { $0 }
        var failed = false
        var lines: [Outcome] = []
        for (name, result) in outcomes {
            switch result {
            case .success(let cover):
                lines.append(Outcome(name: name, cover: cover, milliseconds: timings[name]))
                if !output.json { Terminal.output(Covers.describe(name: name, cover)) }
            case .failure(let error):
                failed = true
                lines.append(Outcome(name: name, error: error.description))
                if !output.json { Terminal.error("error: \(error.description)") }
            }
        }
        if output.json { Terminal.output(try ReportJSON.text(lines)) }
        if failed { throw ExitCode.failure }
    }

    /// `"NAME": cover.jpg from the feed (256: cover-256.jpg, 1024: cover-1024.jpg)`, and the refusal when any.
    static func describe(name: String, _ cover: CoverReport) -> String {
        let thumbnails = cover.thumbnails.sorted { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }
            .map { "\($0.value)" }.joined(separator: ", ")
        var line = "\(name.debugDescription): \(cover.file) from \(cover.source.rawValue) (\(thumbnails))"
        if let refused = cover.refused { line += "; refused \(refused)" }
        return line
    }
}

/// The cover maker, timing each cover by issue name (for `--json`'s `milliseconds`).
final class TimedCoverMaker: CoverMaking {
    let maker = CoverWorkerClient.shared
    let timings = Mutex<[String: Double]>([:])

    func makeCover(_ request: CoverRequest) throws -> CoverReport {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            timings.withLock { $0[request.issueName] = ms }
        }
        return try maker.makeCover(request)
    }

    func problem(withCoverAt path: String) -> String? { maker.problem(withCoverAt: path) }
}

/// `issues contact-sheet FILE [NAME…]`: every cover (or the named issues') in one PNG, for a look at the shelf
/// (`make demo` writes one). Hidden: a tool of the demo, not a command of the library.
struct ContactSheetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contact-sheet", abstract: "Write a PNG of the covers.", shouldDisplay: false)

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The PNG to write.")
    var file: String

    @Argument(help: "The issues' names (default: every issue with a cover, newest first).")
    var names: [String] = []

    @Option(help: "Covers a row.")
    var across = 4

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        var paths: [String] = []
        for issue in try await library.issues() where names.isEmpty || names.contains(issue.name) {
            guard let cover = library.cover(of: issue), let thumbnail = cover.thumbnails["256"] else { continue }
            paths.append(library.contentURL(for: issue).appendingPathComponent(thumbnail).path)
        }
        let png = try ContactSheet.png(of: paths, tileWidth: 256, across: across)
        try png.write(to: URL(fileURLWithPath: file), options: .atomic)
        Terminal.output("wrote \(file): \(paths.count) covers")
    }
}
