import Foundation
import Newsstand
import NewsstandCore

/// One service per library: an `flock` held for the service's life (the kernel drops it if the process
/// dies, so a crash never leaves a stale lock), with the holder's PID written beside it so that a second
/// start can say who holds it.
public final class ServiceLock: Sendable {
    private let lock: FileLock
    private let pidFile: String

    private init(lock: FileLock, pidFile: String) {
        self.lock = lock
        self.pidFile = pidFile
    }

    /// Takes the library's service lock, without waiting.
    /// - Throws: `.libraryUnavailable` naming the process that holds it.
    public static func acquire(for library: Library) async throws -> ServiceLock {
        let layout = library.layout
        return try await runBlocking {
            try POSIX.makeDirectory(layout.syncStatus)
            guard let lock = try FileLock.try(path: layout.serviceLock) else {
                let holder = (try? AtomicFile.read(layout.servicePID)).flatMap { $0 }.map {
                    String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                }
                throw NewsstandError(
                    .libraryUnavailable,
                    "another service is already running on \(layout.root)\(holder.map { " (PID \($0))" } ?? ""); one service per library")
            }
            try AtomicFile.write(Data("\(getpid())\n".utf8), to: layout.servicePID, durable: false)
            return ServiceLock(lock: lock, pidFile: layout.servicePID)
        }
    }

    /// Removes the PID file; the lock itself goes with the value (or the process).
    deinit {
        try? POSIX.unlinkIfPresent(pidFile)
    }
}
