import Foundation
internal import NewsstandCore  // TreeRemover

#if canImport(Glibc)
    import Glibc
#endif

/// What a finished command printed and how it exited; stdout and stderr are kept apart because the
/// tool's contract gives them different jobs.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// True when the process was ended by a signal rather than exiting.
    public var signalled: Bool
}

/// Runs the built `issues` binary (and other programs) as real child processes.
public enum CommandRunner {
    /// The `issues` executable built next to the test bundle (`ISSUES_BINARY` overrides).
    public static var issuesBinary: String {
        if let path = ProcessInfo.processInfo.environment["ISSUES_BINARY"] { return path }
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("issues").path,
            URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent().appendingPathComponent(
                "issues"
            ).path,
            packageRoot.appendingPathComponent(".build/debug/issues").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[2]
    }

    /// The package's root folder (from this file's compile-time path).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// A child environment with no proxies and no extra CA certificates (tests talk to 127.0.0.1 only
    /// and set these themselves) and the given extras.
    public static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        let proxies = ["http_proxy", "https_proxy", "all_proxy", "no_proxy"].flatMap { [$0, $0.uppercased()] }
        for key in proxies + ["SSL_CERT_FILE", "SSL_CERT_DIR", "ISSUES_LIBRARY"] { env[key] = nil }
        for (key, value) in extra { env[key] = value }
        return env
    }

    /// Runs `issues` with `arguments` against `library` and waits for it.
    public static func issues(
        _ arguments: [String], library: URL?, environment extra: [String: String] = [:], stdin: String? = nil
    ) throws -> CommandResult {
        var args = arguments
        // Right after the subcommand, so that a `--` later in the arguments cannot swallow it.
        if let library { args.insert(contentsOf: ["--library", library.path], at: min(1, args.count)) }
        return try run(issuesBinary, args, environment: environment(extra), stdin: stdin)
    }

    /// Runs a program and waits; output goes through temporary files, so a chatty child cannot
    /// dead-lock on a full pipe.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
    )
        throws -> CommandResult
    {
        let process = try start(executable, arguments, environment: environment, stdin: stdin)
        process.process.waitUntilExit()
        return process.result()
    }

    /// Starts a program without waiting (for `kill -9` tests).
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
    )
        throws -> RunningCommand
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let out = folder.appendingPathComponent("stdout")
        let err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        if let stdin {
            let input = folder.appendingPathComponent("stdin")
            try Data(stdin.utf8).write(to: input)
            process.standardInput = try FileHandle(forReadingFrom: input)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        return RunningCommand(process: process, folder: folder)
    }
}

/// A child process started by `CommandRunner.start`.
public final class RunningCommand: @unchecked Sendable {
    // @unchecked: Process is not Sendable; tests use a RunningCommand from one task at a time.
    public let process: Process
    let folder: URL

    init(process: Process, folder: URL) {
        self.process = process
        self.folder = folder
    }

    public var pid: Int32 { process.processIdentifier }

    /// Sends `signal` (e.g. SIGKILL for `kill -9`).
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end (polling, so it can be awaited without blocking the pool).
    public func wait(timeout: Duration = .seconds(120)) async throws -> CommandResult {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                send(SIGKILL)
                throw TimeoutError(description: "process \(pid) did not end within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return result()
    }

    /// The file the process's stdout goes to (readable while it runs).
    public var stdoutPath: String { folder.appendingPathComponent("stdout").path }

    /// Reads what the process printed so far.
    public var stderrSoFar: String {
        (try? String(contentsOf: folder.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    }

    public func result() -> CommandResult {
        let out = (try? String(contentsOf: folder.appendingPathComponent("stdout"), encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: folder.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        try? TreeRemover.remove(folder.path)  // cleanup: the output was read above
        return CommandResult(
            status: process.terminationStatus, stdout: out, stderr: err,
            signalled: process.terminationReason == .uncaughtSignal)
    }
}

public struct TimeoutError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}
