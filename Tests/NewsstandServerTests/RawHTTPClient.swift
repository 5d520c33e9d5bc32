import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A GET over a plain socket that reads only when asked: a client that falls behind, which an HTTP client
/// library (reading as data comes) cannot be.
final class RawHTTPClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var ended = false

    struct Failure: Error, CustomStringConvertible { var description: String }

    init(port: Int, path: String, headers: [String] = []) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect: \(errno)") }
        // A receive buffer of 16 KiB: the client falls behind after a few frames, as a slow one would.
        var size: Int32 = 16 << 10
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // `Connection: close`: the end of the stream is the end of the connection, which `recv` sees.
        let request = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Accept: text/event-stream", "Connection: close"] + headers)
            .joined(separator: "\r\n") + "\r\n\r\n"
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send: \(errno)") }
    }

    deinit { close(fd) }

    var debugText: String { String(decoding: buffer, as: UTF8.self) }

    /// Reads until `text` has arrived (or the server closed), and returns everything read so far.
    func read(until text: String) throws -> String {
        while !String(decoding: buffer, as: UTF8.self).contains(text), !ended { try fill() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Reads events until the one with cursor `last` has arrived or the server ends the stream; returns the ids
    /// of the events (`id:` lines), in order.
    func readEvents(until last: Int64) throws -> [Int64] {
        var ids: [Int64] = []
        var scanned = 0
        let prefix = Array("id: ".utf8)
        while true {
            // By bytes: as a String, a chunk header's "\r\n" is one Character and hides the "\n" before "id:".
            while let newline = buffer[scanned...].firstIndex(of: 0x0A) {
                let line = buffer[scanned..<newline]
                scanned = newline + 1
                if line.starts(with: prefix), let id = Int64(String(decoding: line.dropFirst(prefix.count), as: UTF8.self)) {
                    ids.append(id)
                }
            }
            if ids.last == last || ended { return ids }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = recv(fd, &chunk, chunk.count, 0)
        if count < 0 { throw Failure(description: "recv: \(errno)") }
        if count == 0 { ended = true }
        buffer += chunk[0..<count]
    }
}
