import ArgumentParser
import Foundation
import Newsstand

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open an issue's folder with the desktop opener (xdg-open), or print its path where there is none.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issue's name.")
    var name: String

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let folder = try await library.contentURL(forIssueNamed: name).path
        guard let opener = Open.findExecutable("xdg-open") else {
            Terminal.output(folder)
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [folder]
        do {
            try process.run()
            process.waitUntilExit()
        } catch {
            Terminal.error("warning: cannot run \(opener): \(error.localizedDescription)")
            Terminal.output(folder)
            return
        }
        if process.terminationStatus != 0 {
            Terminal.error("warning: xdg-open exited with status \(process.terminationStatus); the folder is:")
            Terminal.output(folder)
        }
    }

    static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
