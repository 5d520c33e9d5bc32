import ArgumentParser
import Foundation
import Newsstand
import NewsstandService

struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Install or remove the systemd unit that runs `issues serve` for this library.",
        subcommands: [ServiceInstall.self, ServiceUninstall.self])
}

/// What install and uninstall share: which unit, where.
struct UnitOptions: ParsableArguments {
    @Flag(name: .long, help: "A user unit (~/.config/systemd/user, `systemctl --user`) instead of a system one.")
    var user = false

    @Option(name: .long, help: ArgumentHelp("The unit's name (issues-NAME.service); default issues.service.", valueName: "name"))
    var name: String?

    func validate() throws {
        if let name, name.isEmpty || !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) {
            throw ValidationError("--name takes letters, digits, '-', '_' and '.' only")
        }
    }

    var fileName: String { name.map { "issues-\($0).service" } ?? "issues.service" }
    var path: String { SystemdUnit.directory(user: user) + "/" + fileName }
    var systemctl: String { user ? "systemctl --user" : "systemctl" }
}

struct ServiceInstall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Write the systemd unit (idempotent: an identical unit is left as it is).",
        discussion: """
            The unit runs `issues serve` on this library with Type=notify, a watchdog, Restart=on-failure \
            and hardening that leaves only the library writable. It is written, not started: the command \
            prints the systemctl lines to enable it. For no resident process, the README shows a timer \
            running `issues sync` instead.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var unit: UnitOptions

    @Flag(name: .long, help: "Run the scheduler only, without the web server (`serve --no-http`).")
    var noHTTP = false

    @Option(name: .long, help: ArgumentHelp("The address the server listens on (ADDR:PORT).", valueName: "addr:port"))
    var listen: String?

    func validate() throws {
        if noHTTP && listen != nil { throw ValidationError("--listen and --no-http cannot be combined") }
    }

    func run() async throws {
        let library = try libraryOptions.resolvedURL().path
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let text = SystemdUnit(
            name: unit.fileName, executable: executable, library: library, user: unit.user, headless: noHTTP,
            listen: listen
        ).text
        let path = unit.path
        if let existing = try AtomicFile.read(path), existing == Data(text.utf8) {
            Terminal.output("\(path) is already installed (unchanged)")
            return
        }
        try FileManager.default.createDirectory(
            atPath: SystemdUnit.directory(user: unit.user), withIntermediateDirectories: true)
        try AtomicFile.write(Data(text.utf8), to: path)
        Terminal.output("wrote \(path)")
        Terminal.output("start it with: \(unit.systemctl) daemon-reload && \(unit.systemctl) enable --now \(unit.fileName)")
    }
}

struct ServiceUninstall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall", abstract: "Remove the systemd unit (idempotent).")

    @OptionGroup var unit: UnitOptions

    func run() async throws {
        let path = unit.path
        guard try AtomicFile.read(path) != nil else {
            Terminal.output("\(path) is not installed")
            return
        }
        try POSIX.unlinkIfPresent(path)
        Terminal.output("removed \(path)")
        Terminal.output("if it was running: \(unit.systemctl) disable --now \(unit.fileName) && \(unit.systemctl) daemon-reload")
    }
}
