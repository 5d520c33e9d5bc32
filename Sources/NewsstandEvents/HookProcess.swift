import Dispatch
import Foundation
import NewsstandCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one exec hook: `posix_spawnp` with the argv as configured (no shell ever sees a title), the event
/// JSON on stdin (an unlinked file, so a hook that never reads cannot block us or raise SIGPIPE), the
/// hook's stdout sent to our stderr (our stdout carries data), in a process group of its own that is
/// killed whole when the time limit passes. Blocking: call on a thread of its own.
enum HookProcess {
    enum Outcome: Equatable {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
        case failedToStart(String)

        var succeeded: Bool { self == .exited(0) }
    }

    static func run(
        _ argv: [String], environment: [String: String], input: [UInt8], timeout: TimeInterval, scratchFolder: String
    ) -> Outcome {
        let scratch = "\(scratchFolder)/.stdin-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let inputFD: Int32
        do {
            try POSIX.makeDirectory(scratchFolder)
            inputFD = try POSIX.open(scratch, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
            _ = unlink(scratch)
            try input.withUnsafeBytes { try POSIX.writeAll(inputFD, $0, path: scratch) }
            _ = lseek(inputFD, 0, SEEK_SET)
        } catch {
            return .failedToStart("\(error)")
        }
        defer { _ = close(inputFD) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputFD, 0)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        let environmentLines = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let spawned = withCStrings(argv) { cArgv -> Int32 in
            guard let program = cArgv[0] else { return ENOMEM }
            return withCStrings(environmentLines) { cEnvironment in
                // Its own process group, killed whole at the limit (`POSIX.withChildSpawnAttributes`).
                POSIX.withChildSpawnAttributes { attributes in
                    posix_spawnp(&pid, program, &actions, &attributes, cArgv, cEnvironment)
                }
            }
        }
        guard spawned == 0 else { return .failedToStart("\(argv[0]): \(POSIX.describe(spawned))") }

        // The limit: the whole group is killed unless the hook has exited by then. `finished` is set before
        // the child is reaped (waitid with WNOWAIT), so its pid cannot be reused by the time we kill.
        let finished = Mutex(false)
        let timedOut = Mutex(false)
        let timer = DispatchWorkItem {
            finished.withLock { done in
                guard !done else { return }
                timedOut.withLock { $0 = true }
                _ = kill(-pid, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        var info = siginfo_t()
        _ = POSIX.retrying { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
        finished.withLock { $0 = true }
        timer.cancel()
        var status: Int32 = 0
        _ = POSIX.retrying { waitpid(pid, &status, 0) }
        if timedOut.withLock({ $0 }) { return .timedOut }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// Calls `body` with a NULL-terminated array of C strings (freed after).
    private static func withCStrings<T>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T
    ) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }

    /// Whether `program` is an executable file on `PATH`.
    static func isInstalled(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }
}
