import ArgumentParser
import Foundation
import Newsstand

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an issue by name and date, optionally with assets.",
        discussion: "Like NKLibrary.addIssue(withName:date:). The name must be unique in the library.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issue's unique name, e.g. \"The Daily 2026-11-20\".")
    var name: String

    @Option(name: .long, help: ArgumentHelp("The issue's date, YYYY-MM-DD.", valueName: "date"))
    var date: IssueDate = IssueDate.today()

    @Option(
        name: .customLong("asset"),
        help: ArgumentHelp("An asset URL (http or https); repeat for more.", valueName: "url"))
    var assets: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The publication it belongs to (prune --keep counts per publication); "
                + "by default its name without a trailing date or number.",
            valueName: "name"))
    var publication: String?

    @Option(name: .long, help: TemplateArgument.help)
    var template: String?

    func validate() throws {
        _ = try TemplateArgument.parse(template)
        for asset in assets {
            do {
                _ = try AssetRequest.parseURL(asset)
            } catch let error as NewsstandError {
                throw ValidationError(error.message)
            }
        }
    }

    func run() async throws {
        let requests = try assets.map { AssetRequest(url: try AssetRequest.parseURL($0)) }
        // The config files' layout template is the default when --template is not given.
        let settings = try Settings.load(library: libraryOptions.resolvedURL())
        let library = try await libraryOptions.open(configuration: settings.applied(to: Library.Configuration()))
        let issue = try await library.addIssue(
            named: name, date: date, assets: requests, publication: publication,
            template: try TemplateArgument.parse(template))
        Terminal.output(
            "added \(issue.name.debugDescription) (\(issue.date)) with \(issue.assets.count) asset\(issue.assets.count == 1 ? "" : "s")"
        )
        for asset in issue.assets {
            Terminal.output("  \(asset.id)  \(asset.url.absoluteString)")
        }
        Terminal.output("folder: \(library.contentURL(for: issue).path)")
    }
}
