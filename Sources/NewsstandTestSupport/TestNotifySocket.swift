import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's side of the notify protocol, for tests: a Unix datagram socket a child process is pointed at
/// with `NOTIFY_SOCKET`, collecting what it sends (`READY=1`, `WATCHDOG=1`, …).
public final class TestNotifySocket: @unchecked Sendable {
    /// The socket's path: the child's `NOTIFY_SOCKET`.
    public let path: String
    private let fd: Int32
    private let inbox: Inbox
    private let reader: Thread

    private final class Inbox: @unchecked Sendable {
        let lock = NSLock()
        var received: [String] = []
        func append(_ lines: [String]) {
            lock.lock()
            received += lines
            lock.unlock()
        }
        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return received
        }
    }

    /// Binds a socket at `path` (which must not exist) and starts reading it.
    public init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        func fail(_ code: POSIXErrorCode) -> POSIXError {
            Glibc.close(fd)
            return POSIXError(code)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw fail(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw fail(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.fd = fd
        let inbox = Inbox()
        self.inbox = inbox
        reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { return }
                inbox.append(String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init))
            }
        }
        reader.start()
    }

    /// Every assignment received so far, in order (`READY=1`, `WATCHDOG=1`, `STATUS=…`).
    public var messages: [String] { inbox.all }

    /// Stops reading and removes the socket file.
    public func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        unlink(path)
    }
}
