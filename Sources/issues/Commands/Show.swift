import ArgumentParser
import Foundation
import Newsstand

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one issue and each asset's state.")

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var output: OutputOptions

    @Argument(help: "The issue's name.", completion: IssueNameCompletion.kind)
    var name: String

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        guard let issue = try await library.issue(named: name) else {
            throw NewsstandError.issueNotFound(name, in: library.rootURL.path)
        }
        if output.json {
            var report = library.report(for: issue)
            report.cover = library.cover(of: issue)
            Terminal.output(try ReportJSON.text(report, compact: true))
        } else {
            var subscription: String?
            if let origin = issue.origin {
                subscription = try await library.subscriptions().first { $0.id == origin.subscriptionID }?.name
            }
            Terminal.output(TableRenderer.issue(IssueReport(issue, library: library, subscriptionName: subscription)))
        }
    }
}

