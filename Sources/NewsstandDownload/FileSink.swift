internal import CSystemShims
import Crypto
import Dispatch
import Foundation
import NIOCore
import Synchronization
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Streams a response body into a partial file on a serial queue of its own, so disk writes never run
/// on an event loop or the concurrency pool, and network reads overlap with disk writes.
///
/// Memory stays flat: once more than `highWater` bytes wait for the disk, the write future returned to
/// AsyncHTTPClient stays pending, which stops reading from the socket until the queue drains.
final class FileSink: Sendable {
    let path: String
    let recordPath: String
    private let fd: Int32
    private let queue: DispatchQueue
    private let hashing: Bool
    private let startsWriteback: Bool
    /// Called on the sink's queue after each write has landed, with the new end of the written bytes.
    private let landed: (@Sendable (Int64) -> Void)?
    // 1 MiB / 256 KiB with socket reads of at most 256 KiB (DownloadEngine): the 1 GiB loopback download
    // keeps curl's throughput (bench `large`) with 2 MiB less peak memory than 2 MiB / 512 KiB with 512 KiB
    // reads. 1 MiB / 256 KiB with 512 KiB reads stalled the socket often enough to lose throughput.
    private static let highWater = 1 << 20
    private static let lowWater = 256 << 10
    /// Writeback is started every this many bytes, so the final fsync finds little left to flush.
    private static let writebackStep: Int64 = 8 << 20

    private struct State: Sendable {
        var queuedBytes = 0
        var failure: NewsstandError?
        var waiters: [EventLoopPromise<Void>] = []
        /// Bytes in the file, as known to the writer; starts at the partial file's size.
        var size: Int64 = 0
        var writebackStart: Int64 = 0
    }
    private let state: Mutex<State>
    private let digest: LockedDigest

    /// Opens (creating) the partial file. When `hashing`, the bytes already in it are hashed first, so the
    /// digest at the end covers the whole file even across a resume. Blocking.
    /// - Parameters:
    ///   - offset: Where writing starts, for one range of a segmented download (which never hashes as it
    ///     goes: its ranges arrive out of order); nil appends at the end of the file.
    ///   - startsWriteback: Start writeback every `writebackStep` bytes, for a file that will be flushed.
    ///   - landed: Called after each write has landed, with the new end of the written bytes.
    init(
        path: String, recordPath: String, hashing: Bool, at offset: Int64? = nil, startsWriteback: Bool,
        landed: (@Sendable (Int64) -> Void)? = nil
    ) throws {
        self.path = path
        self.recordPath = recordPath
        self.hashing = hashing && offset == nil
        self.startsWriteback = startsWriteback
        self.landed = landed
        self.queue = DispatchQueue(label: "newsstand.file-sink")
        fd = try FileSink.openPartial(path)
        var initial = State()
        var hasher: SHA256?
        do {
            if let offset {
                initial.size = offset
                initial.writebackStart = offset
            } else {
                var info = stat()
                guard fstat(fd, &info) == 0 else { throw NewsstandError.posix(errno, "cannot read", path: path) }
                initial.size = Int64(info.st_size)
                if self.hashing { hasher = try FileSink.hashExisting(path: path, bytes: initial.size) }
            }
        } catch {
            _ = close(fd)
            throw error
        }
        state = Mutex(initial)
        digest = LockedDigest(hasher)
    }

    deinit {
        _ = close(fd)
    }

    /// The end of the bytes written: the file size the writer has reached, or for a range, its cursor (after every queued write has landed, once `drain` returned).
    var size: Int64 { state.withLock { $0.size } }

    /// Empties the file and saves `record` before any byte of the new body is written. Runs in order
    /// with the writes.
    func restart(record: ResumeRecord) {
        enqueue(bytes: 0) {
            try self.empty()
            self.state.withLock {
                $0.size = 0
                $0.writebackStart = 0
            }
            self.digest.reset(self.hashing)
            try record.save(self.recordPath)
        }
    }

    /// Empties the file now (before an attempt that starts from zero). Blocking.
    func truncateNow() throws {
        try empty()
        state.withLock {
            $0.size = 0
            $0.writebackStart = 0
        }
        digest.reset(hashing)
    }

    /// Truncates the file to nothing, unless it is empty already. A new download's file always is, and on
    /// ext4 a truncation to zero marks the file for writeback at its close (`auto_da_alloc`, meant for
    /// programs that rewrite a file in place): every downloaded file was then written back as it closed,
    /// and the catalog's flushes waited behind that data (200 × 5 MiB with `--jobs 8`: 2.7 s, not 1.x s).
    private func empty() throws {
        var info = stat()
        if fstat(fd, &info) == 0, info.st_size == 0 { return }
        try POSIX.call("cannot truncate", path: path) { ftruncate(fd, 0) }
    }

    /// Appends `buffer`. The future completes at once unless too much waits for the disk.
    func write(_ buffer: ByteBuffer, eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let count = buffer.readableBytes
        let outcome: EventLoopFuture<Void>? = state.withLock { state in
            if let failure = state.failure { return eventLoop.makeFailedFuture(failure) }
            if state.queuedBytes + count > FileSink.highWater {
                let promise = eventLoop.makePromise(of: Void.self)
                state.waiters.append(promise)
                return promise.futureResult
            }
            return nil
        }
        enqueue(bytes: count) {
            try buffer.withUnsafeReadableBytes { bytes in
                let offset = self.state.withLock { $0.size }
                var written = 0
                while written < bytes.count {
                    let n = try POSIX.call("cannot write", path: self.path) {
                        pwrite(
                            self.fd, bytes.baseAddress.map { $0 + written }, bytes.count - written,
                            off_t(offset) + off_t(written))
                    }
                    written += n
                }
                self.digest.update(bytes)
                let kick: (Int64, Int64)? = self.state.withLock { state in
                    state.size += Int64(bytes.count)
                    guard self.startsWriteback, state.size - state.writebackStart >= FileSink.writebackStep else { return nil }
                    defer { state.writebackStart = state.size }
                    return (state.writebackStart, state.size - state.writebackStart)
                }
                if let (start, count) = kick { _ = newsstand_start_writeback(self.fd, start, count) }
                if let landed = self.landed { landed(offset + Int64(bytes.count)) }
            }
        }
        return outcome ?? eventLoop.makeSucceededVoidFuture()
    }

    /// Waits until every queued write has landed; throws the first write error.
    /// - Returns: The file size and, when hashing, the SHA-256 of the whole file as lowercase hex.
    func drain() async throws -> (size: Int64, sha256: String?) {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                if let failure = self.state.withLock({ $0.failure }) {
                    continuation.resume(throwing: failure)
                } else {
                    continuation.resume()
                    // The tail since the last step goes to the disk now, while the run moves on (to the flush, or
                    // to a segment's next range): starting writeback can block while the disk's queue is full,
                    // and a range's connection waited for it before asking for the next range.
                    if self.startsWriteback {
                        let (start, end) = self.state.withLock { state in
                            defer { state.writebackStart = max(state.writebackStart, state.size) }
                            return (state.writebackStart, state.size)
                        }
                        if end > start { _ = newsstand_start_writeback(self.fd, start, end - start) }
                    }
                }
            }
        }
        return (state.withLock { $0.size }, digest.hex())
    }

    private func enqueue(bytes: Int, _ operation: @escaping @Sendable () throws -> Void) {
        state.withLock { $0.queuedBytes += bytes }
        queue.async {
            let failed = self.state.withLock { $0.failure != nil }
            if !failed {
                do {
                    try operation()
                } catch {
                    let wrapped =
                        error as? NewsstandError
                        ?? NewsstandError(.io, "cannot write \(self.path): \(error)", underlying: error)
                    self.state.withLock { $0.failure = wrapped }
                }
            }
            let ready: [EventLoopPromise<Void>] = self.state.withLock { state in
                state.queuedBytes -= bytes
                guard state.queuedBytes <= FileSink.lowWater || state.failure != nil else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            let failure = self.state.withLock { $0.failure }
            for promise in ready {
                if let failure { promise.fail(failure) } else { promise.succeed() }
            }
        }
    }

    /// Opens the partial file without following a symbolic link: a `.part` that is a link (planted, or left by
    /// anything but us) is never written through; it is removed and the download starts from an empty file.
    private static func openPartial(_ path: String) throws -> Int32 {
        do {
            return try POSIX.open(path, O_WRONLY | O_CREAT | O_NOFOLLOW)
        } catch let error as NewsstandError where error.errno == ELOOP {
            try POSIX.unlinkIfPresent(path)  // unlink removes the link itself, never its target
            return try POSIX.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
        }
    }

    private static func hashExisting(path: String, bytes: Int64) throws -> SHA256 {
        try FileDigest.sha256Hasher(of: path, bytes: bytes)
    }
}

/// The running SHA-256 of a partial file. swift-crypto's `SHA256` is not `Sendable` on Linux; a `Mutex`
/// is `Sendable` whatever it holds, because every access holds the lock (in practice only the sink's serial
/// queue and the awaiting `drain` touch it, never at once).
private final class LockedDigest: Sendable {
    private let hasher: Mutex<SHA256?>

    init(_ hasher: consuming sending SHA256?) { self.hasher = Mutex(hasher) }

    func reset(_ enabled: Bool) { hasher.withLock { $0 = enabled ? SHA256() : nil } }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        // Handed in as a `Data` that borrows the bytes (no copy): a raw pointer is not `Sendable`, so region
        // checking would not let it reach the value inside the `Mutex`. The hasher keeps no reference to it.
        let view = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
        hasher.withLock { $0?.update(data: view) }
    }

    func hex() -> String? {
        hasher.withLock { $0.map { FileDigest.hex($0.finalize()) } }
    }
}
