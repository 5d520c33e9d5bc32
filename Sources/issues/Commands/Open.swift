import ArgumentParser
import Foundation
import Newsstand

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open an issue's folder with the desktop opener (xdg-open), or print its path where there is none.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issue's name.", completion: IssueNameCompletion.kind)
    var name: String

    func run() async throws {
        let library = try await libraryOptions.open(create: false)
        let folder = try await library.contentURL(forIssueNamed: name).path
        // Opened is read: the shelf's "new" badge goes, as NewsstandKit's does.
        try await library.setRead(true, issuesNamed: [name])
        guard let opener = Open.findExecutable("xdg-open") else {
            Terminal.output(folder)
            return
        }
        switch Open.run(opener, folder) {
        case .opened:
            break
        case .failed(let reason):
            Terminal.error("warning: \(reason); the folder is:")
            Terminal.output(folder)
        }
    }

    enum Outcome: Equatable {
        case opened
        /// One line: what went wrong, and the opener's last line of output, if any.
        case failed(String)
    }

    /// Runs the opener with its output in a temporary file rather than on the terminal: xdg-open on a
    /// headless machine prints many lines of diagnostics, and only its last line is worth showing, and
    /// only when it failed. A file, not a pipe: a program the opener starts in the background may keep
    /// the descriptor open for hours, and a pipe would then never reach end-of-file.
    static func run(_ opener: String, _ folder: String) -> Outcome {
        let name = URL(fileURLWithPath: opener).lastPathComponent
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("issues-open-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: log)
        else {
            return .failed("cannot create \(log.path) for the output of \(name)")
        }
        defer {
            try? handle.close()
            try? FileManager.default.removeItem(at: log)  // cleanup: the log only matters until we read it
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [folder]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        do {
            try process.run()
        } catch {
            return .failed("cannot run \(opener): \(error.localizedDescription)")
        }
        process.waitUntilExit()
        if process.terminationReason == .exit && process.terminationStatus == 0 { return .opened }
        let how =
            process.terminationReason == .exit
            ? "exited with status \(process.terminationStatus)" : "was killed by signal \(process.terminationStatus)"
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let last = output.split(whereSeparator: \.isNewline).last { !$0.allSatisfy(\.isWhitespace) }
        let detail = last.map { ": " + DisplayWidth.printable($0.trimmingCharacters(in: .whitespaces)) } ?? ""
        return .failed("\(name) \(how)\(detail)")
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
