import ArgumentParser
import Foundation
import Newsstand

struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Resume every download in the saved list, and retry failed assets.",
        discussion: "What a relaunched Newsstand app did with its downloadingAssets.")

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var run: DownloadRunOptions
    @OptionGroup var tls: TLSOptions

    func run() async throws {
        let (library, options) = try await libraryOptions.openForDownloads(run, tls)
        try await DownloadSession.run(library: library) { consume in
            try await library.resumeDownloads(options: options, consume)
        }
    }
}
