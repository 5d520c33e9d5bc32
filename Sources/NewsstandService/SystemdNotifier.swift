import Foundation
import Glibc

/// systemd's notify protocol (sd_notify(3)) in a few lines, without libsystemd: datagrams such as
/// `READY=1` and `WATCHDOG=1` to the socket named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract
/// namespace). Outside systemd the variable is unset and every call does nothing.
public struct SystemdNotifier: Sendable {
    private let socketPath: String?
    /// Half of `WATCHDOG_USEC`, when systemd set a watchdog for this process: how often to ping.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let pidMatches = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if pidMatches, let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
    }

    public var isActive: Bool { socketPath != nil }

    /// Sends `state` (`READY=1`, `STOPPING=1`, `WATCHDOG=1`, `STATUS=…`); false when it could not be sent.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        // `@name` is an abstract socket: a leading NUL, and the length covers the name only.
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            if !abstract { raw[path.count] = 0 }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
        return sent == bytes.count
    }
}
