import ArgumentParser
import Foundation
import Newsstand

struct Download: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download every pending asset of the named issues (all issues if none named).",
        discussion: "Failed assets are retried. Ctrl-C stops cleanly; `issues resume` continues.")

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var run: DownloadRunOptions
    @OptionGroup var tls: TLSOptions

    @Argument(help: "Issue names.", completion: IssueNameCompletion.kind)
    var names: [String] = []

    func run() async throws {
        let (library, options) = try await libraryOptions.openForDownloads(run, tls)
        let names = self.names.isEmpty ? nil : self.names
        try await DownloadSession.run(library: library) { consume in
            try await library.download(issues: names, options: options, consume)
        }
    }
}
