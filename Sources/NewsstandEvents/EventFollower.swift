import Foundation
import NewsstandReports
import NewsstandCatalog
import NewsstandCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the event log on a thread of its own and, when following, sleeps in `poll(2)` on an inotify watch
/// of the catalog folder (every commit writes the database's WAL file there) and on a pipe that the
/// consumer's leaving writes to. No timer: it wakes only when the folder changes or the consumer leaves.
package final class EventFollower: Sendable {
    private let catalog: Catalog
    private let layout: LibraryLayout
    private let follow: Bool
    /// The pipe's write end while the thread runs; -1 once it has closed the pipe (so a late cancel never
    /// writes into a pipe nobody reads, which would raise SIGPIPE).
    private let wakeWriter = Mutex<Int32>(-1)

    package init(catalog: Catalog, layout: LibraryLayout, follow: Bool) {
        self.catalog = catalog
        self.layout = layout
        self.follow = follow
    }

    /// Starts the thread; events after `cursor` go to `continuation`, which is finished at the end.
    package func start(after cursor: Int64, _ continuation: AsyncThrowingStream<EventReport, any Error>.Continuation) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            continuation.finish(throwing: NewsstandError.posix(errno, "cannot follow", path: layout.database))
            return
        }
        // Not inherited by hooks this process runs; never blocking a cancel (pipe2 is not imported).
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        wakeWriter.withLock { $0 = fds[1] }
        continuation.onTermination = { [self] _ in self.wake() }
        let reader = fds[0]
        let thread = Thread { [self] in
            do {
                try self.run(after: cursor, wakeReader: reader, continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            self.wakeWriter.withLock { writer in
                if writer >= 0 { _ = close(writer) }
                writer = -1
            }
            _ = close(reader)
        }
        thread.name = "issues-events"
        thread.start()
    }

    /// Makes the thread look up: the consumer left.
    private func wake() {
        wakeWriter.withLock { writer in
            guard writer >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(writer, &byte, 1)
        }
    }

    private func run(
        after start: Int64, wakeReader: Int32, _ continuation: AsyncThrowingStream<EventReport, any Error>.Continuation
    ) throws {
        // A change a killed process left half-done is finished first, so its events are seen now.
        try catalog.recoverIfNeeded()
        var watch: Int32 = -1
        if follow {
            try POSIX.makeDirectory(layout.catalog)
            watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            guard watch >= 0 else { throw NewsstandError.posix(errno, "cannot watch", path: layout.catalog) }
            let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
            guard inotify_add_watch(watch, layout.catalog, mask) >= 0 else {
                let code = errno
                _ = close(watch)
                throw NewsstandError.posix(code, "cannot watch", path: layout.catalog)
            }
        }
        defer { if watch >= 0 { _ = close(watch) } }
        var cursor = start
        let batch = 1_000
        while true {
            // Watch first, read second: a commit between the two still wakes the next poll.
            var events: [CatalogEvent]
            repeat {
                events = try catalog.readEvents(after: cursor, limit: batch)
                for event in events {
                    cursor = max(cursor, event.cursor)
                    if case .terminated = continuation.yield(EventReport(event, layout: layout)) { return }
                }
            } while events.count == batch
            guard follow else { return }
            var fds = [pollfd(fd: watch, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
            let ready = POSIX.retrying { poll(&fds, 2, -1) }
            guard ready >= 0 else { throw NewsstandError.posix(errno, "cannot wait for events", path: layout.database) }
            if fds[1].revents != 0 { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(watch, &buffer, buffer.count) > 0 {}  // drained; what changed is read from the log itself
        }
    }
}
