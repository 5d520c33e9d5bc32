import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
internal import NewsstandCore  // POSIX.retrying
import Synchronization

/// The selected representation of a path.
struct Representation: Sendable {
    var size: Int64
    /// Strong ETag with quotes, before any `weakETag` fault.
    var etag: String
    var lastModified: Int64
    var contentType: String
    var source: ContentSource
}

/// Where body bytes come from.
enum ContentSource: Sendable {
    case memory(ByteBuffer)
    case file(OpenFile)
}

/// A body being sent; event-loop confined, hence a plain class.
final class BodyStream {
    /// How the connection is left once ``stopAfter`` bytes are out.
    enum Ending {
        case complete
        case truncate
        /// Nothing more is sent; the connection stays open until the client closes it.
        case hold
        case cut(reset: Bool)
    }

    let path: String
    let source: ContentSource
    let offset: Int64
    let stopAfter: Int64
    let ending: Ending
    let chunkSize: Int
    let bytesPerSecond: Int?
    let keepAlive: Bool
    let started: NIODeadline
    var sent: Int64 = 0
    /// The next file chunk, already being read while the current one is written.
    var prefetched: EventLoopFuture<ByteBuffer>?

    init(
        path: String,
        source: ContentSource,
        offset: Int64,
        stopAfter: Int64,
        ending: Ending,
        chunkSize: Int,
        bytesPerSecond: Int?,
        keepAlive: Bool,
        started: NIODeadline
    ) {
        self.path = path
        self.source = source
        self.offset = offset
        self.stopAfter = stopAfter
        self.ending = ending
        self.chunkSize = chunkSize
        self.bytesPerSecond = bytesPerSecond
        self.keepAlive = keepAlive
        self.started = started
    }
}

// MARK: - Files

/// A file opened for one response.
struct OpenedFile: Sendable {
    var file: OpenFile
    var size: Int64
    var mtimeSeconds: Int64
    var mtimeNanoseconds: Int64
}

/// A read-only descriptor shared by thread-pool reads and the event loop that closes it.
///
/// Reads and the close take the lock, so a close can never land in the middle of a `pread` (or
/// let the number be reused under it). Holding the lock over one 64 KiB read is brief.
final class OpenFile: Sendable {
    /// -1 once closed.
    private let descriptor: Mutex<CInt>

    private init(descriptor: CInt) {
        self.descriptor = Mutex(descriptor)
    }

    /// Opens the first candidate that is a regular file; nil when none is. Blocking: call on
    /// the thread pool.
    static func openRegularFile(atAnyOf candidates: [String]) throws -> OpenedFile? {
        for path in candidates {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                closeDescriptor(fd)
                continue
            }
            #if canImport(Darwin)
                let mtime = info.st_mtimespec
            #else
                let mtime = info.st_mtim
            #endif
            return OpenedFile(
                file: OpenFile(descriptor: fd),
                size: Int64(info.st_size),
                mtimeSeconds: Int64(mtime.tv_sec),
                mtimeNanoseconds: Int64(mtime.tv_nsec)
            )
        }
        return nil
    }

    /// Reads exactly `count` bytes at `offset`. Blocking: call on the thread pool.
    func read(at offset: Int64, count: Int, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        try descriptor.withLock { fd throws -> ByteBuffer in
            guard fd >= 0 else { throw TestHTTPServerError.fileClosed }
            var buffer = allocator.buffer(capacity: count)
            while buffer.readableBytes < count {
                let done = buffer.readableBytes
                let got = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { raw in
                    let result = POSIX.retrying { pread(fd, raw.baseAddress, count - done, off_t(offset + Int64(done))) }
                    if result < 0 { throw TestHTTPServerError.systemCall("pread", errno: errno) }
                    return result
                }
                if got == 0 { throw TestHTTPServerError.fileShrank }
            }
            return buffer
        }
    }

    /// Closes the descriptor; later calls do nothing.
    func close() {
        descriptor.withLock { fd in
            if fd >= 0 {
                closeDescriptor(fd)
                fd = -1
            }
        }
    }
}

/// `close(2)` under a name that does not clash with ``OpenFile/close()``.
private func closeDescriptor(_ fd: CInt) {
    _ = close(fd)
}
