import Foundation
import ServiceLifecycle
import Synchronization

/// SIGINT and SIGTERM for `issues serve`, caught from the first line of its `run`: a stop asked for while the
/// service is still starting (taking the lock, reading the plans) stops it as soon as its group runs, with
/// status 0, where the signal's default action would have killed it (a CI run caught a SIGTERM sent right after
/// a start ending the process with signal 15).
final class StopSignals: Sendable {
    private let state = Mutex<(asked: Bool, group: ServiceGroup?)>((false, nil))
    private let sources: Mutex<[any DispatchSourceSignal]>

    init() {
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)  // libdispatch watches the signal; the default action must not run
            made.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        sources = Mutex(made)
        sources.withLock { sources in
            for source in sources {
                source.setEventHandler { [weak self] in self?.stop() }
                source.resume()
            }
        }
    }

    /// From now on a stop shuts `group` down gracefully; one asked for before this does so at once.
    func forward(to group: ServiceGroup) {
        let asked = state.withLock { state in
            state.group = group
            return state.asked
        }
        if asked { Task { await group.triggerGracefulShutdown() } }
    }

    private func stop() {
        let group = state.withLock { state in
            state.asked = true
            return state.group
        }
        if let group { Task { await group.triggerGracefulShutdown() } }
    }

    deinit {
        sources.withLock { sources in
            for source in sources { source.cancel() }
        }
    }
}
