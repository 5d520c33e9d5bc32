import Foundation
import Newsstand
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The `issues` command's cover maker: covers are made in a child process of this same binary (`issues
/// cover-worker`), not in this one.
///
/// Why: the image libraries stay mapped in a process once loaded. libvips, poppler and the ~100 libraries
/// Debian links them with are 25–30 MiB resident (measured with `/proc/PID/smaps` during `issues covers`), which
/// `issues serve` carried for the rest of its life after its first cover, and which pushed `issues covers` over
/// its 64 MiB. And a decoder that crashes or hangs on a hostile image takes only the worker with it: the issue
/// gets the placeholder, with the reason in `show`, and the next cover a new worker.
///
/// The worker starts on the first cover, serves one request at a time over a socket pair (a JSON line each
/// way), and ends when it has had nothing to do for ``idleSeconds`` or when the command ends (``stop()``).
/// A kill of the command leaves the worker to finish the cover in hand (placed by rename, never torn) and end
/// at end of input.
final class CoverWorkerClient: CoverMaking, @unchecked Sendable {
    static let shared = CoverWorkerClient()

    /// How long an idle worker is kept for the next cover.
    static let idleSeconds = 5.0
    /// How long one cover may take before the worker is killed as hung (a few hundred ms is usual).
    static let timeoutMilliseconds: Int32 = 60_000

    private let lock = NSLock()
    /// Guarded by `lock`.
    private var worker: Worker?
    /// Guarded by `lock`: changes with every request, so that an idle timer set before it does nothing.
    private var requests = 0

    func makeCover(_ request: CoverRequest) throws -> CoverReport {
        lock.lock()
        defer { lock.unlock() }
        switch exchange(CoverWorkerRequest(make: request)) {
        case .reply(let reply):
            if let report = reply.report { return report }
            throw NewsstandError(.io, reply.error ?? "the cover worker made no cover")
        case .failed(let why):
            // The images are what a worker dies or hangs on: the placeholder alone, in a new worker.
            var placeholder = request
            placeholder.candidates = []
            if case .reply(let reply) = exchange(CoverWorkerRequest(make: placeholder)), var report = reply.report {
                report.refused = "the issue's images stopped the cover maker (\(why))"
                return report
            }
            throw NewsstandError(.io, "the cover maker failed: \(why)")
        }
    }

    func problem(withCoverAt path: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        switch exchange(CoverWorkerRequest(check: path)) {
        case .reply(let reply): return reply.problem ?? reply.error
        case .failed(let why): return "\((path as NSString).lastPathComponent) stopped the cover maker (\(why))"
        }
    }

    /// Ends the worker, if one runs, and waits for it: the command's last step.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        worker?.end()
        worker = nil
    }

    private enum Outcome {
        case reply(CoverWorkerReply)
        case failed(String)
    }

    /// Sends one request and reads its reply, starting a worker if none runs. Call holding `lock`.
    ///
    /// A worker kept from an earlier request that turns out to be gone (killed while idle: the OOM killer, an
    /// admin) is replaced and the request sent again: only a worker that died on this request blames it.
    private func exchange(_ request: CoverWorkerRequest) -> Outcome {
        requests += 1
        defer { stopWhenIdle(after: requests) }
        var line: [UInt8]
        do {
            line = [UInt8](try JSONEncoder().encode(request))
            line.append(0x0A)
        } catch {
            return .failed("\(error)")
        }
        var retried = false
        while true {
            let reused = worker != nil
            if worker == nil {
                do {
                    worker = try Worker.start()
                } catch {
                    return .failed("\(error)")
                }
            }
            guard var running = worker.take() else { return .failed("no worker") }
            let reply: [UInt8]?
            if running.send(line) {
                do {
                    reply = try running.lines.next(timeout: Self.timeoutMilliseconds)
                } catch {
                    running.kill()
                    return .failed("no answer in \(Self.timeoutMilliseconds / 1000) s")
                }
            } else {
                reply = nil
            }
            guard let reply else {
                let ended = running.kill()
                if reused && !retried {
                    retried = true
                    continue
                }
                return .failed(ended)
            }
            do {
                let decoded = try JSONDecoder().decode(CoverWorkerReply.self, from: Data(reply))
                worker = running
                return .reply(decoded)
            } catch {
                // Out of step with its requests from here on: a new worker serves the next.
                running.kill()
                return .failed("an unreadable answer: \(error)")
            }
        }
    }

    private func stopWhenIdle(after request: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.idleSeconds) { [weak self] in
            // A cover under way holds the lock, and its own request sets a later timer: this one need not wait.
            guard let self, lock.try() else { return }
            defer { lock.unlock() }
            guard requests == request else { return }
            worker?.end()
            worker = nil
        }
    }
}

/// One worker process and our end of its socket.
private struct Worker {
    let pid: pid_t
    let socket: Int32
    var lines: LineReader

    /// Starts `issues cover-worker` (this process's own binary) with one end of a socket pair as its standard
    /// input and output, in a process group of its own (a Ctrl-C meant for the command must not kill the cover
    /// in hand), with the signals the command ignores back to their defaults.
    static func start() throws -> Worker {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw NewsstandError(.io, "cannot start the cover maker: \(POSIX.describe(errno))")
        }
        defer { close(pair[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
        posix_spawn_file_actions_adddup2(&actions, pair[1], 1)
        // /proc/self/exe, not the path it names: a package upgrade that replaces the binary under a running
        // `issues serve` leaves that path to the new version (or to nothing), and the worker must be this one.
        // Without /proc (a bare chroot), the path is what there is.
        let program = access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : Self.executableName()
        let argv = [strdup(Self.executableName()), strdup("cover-worker"), nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = POSIX.withChildSpawnAttributes { attributes in
            posix_spawn(&pid, program, &actions, &attributes, argv, environ)
        }
        guard spawned == 0 else {
            close(pair[0])
            throw NewsstandError(.io, "cannot start the cover maker \(program): \(POSIX.describe(spawned))")
        }
        return Worker(pid: pid, socket: pair[0], lines: LineReader(fd: pair[0]))
    }

    /// This process's binary's path, for the worker's `argv[0]` (what `ps` shows).
    private static func executableName() -> String {
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &path, path.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: path[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes `line` whole; false when the worker is gone (no SIGPIPE: the write is a socket send).
    func send(_ line: [UInt8]) -> Bool {
        var offset = 0
        while offset < line.count {
            let sent = line[offset...].withUnsafeBytes { bytes in
                POSIX.retrying { Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Ends a worker that is between requests: end of input, then it exits (its end of the socket closes) and
    /// is reaped; one that has not gone within 2 s (stopped, or hung in a library's exit handler) is killed.
    mutating func end() {
        shutdown(socket, Int32(SHUT_WR))
        while true {
            do {
                guard try lines.next(timeout: 2_000) != nil else { break }
            } catch {
                _ = Glibc.kill(pid, SIGKILL)
                break
            }
        }
        _ = reap()
        close(socket)
    }

    /// Kills the worker and reaps it; what became of it, for the reason an issue got the placeholder.
    @discardableResult
    func kill() -> String {
        _ = Glibc.kill(pid, SIGKILL)
        let status = reap()
        close(socket)
        // WIFEXITED / WTERMSIG are macros Swift does not import.
        let signal = status & 0x7F
        if signal == 0 { return "the worker exited with status \((status >> 8) & 0xFF)" }
        return "the worker ended by signal \(signal)"
    }

    private func reap() -> Int32 {
        var status: Int32 = 0
        _ = POSIX.retrying { waitpid(pid, &status, 0) }
        return status
    }
}
