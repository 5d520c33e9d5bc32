import Foundation
import NewsstandCore

/// How `issues serve` listens.
public struct ServeOptions: Sendable, Hashable {
    /// The documented default port (8785: unassigned by IANA, and "8785" spells nothing in particular).
    public static let defaultPort = 8785

    /// The address to bind, without brackets (`127.0.0.1`, `::1`, `0.0.0.0`, a host name).
    public var host: String
    /// The port; 0 asks the system for a free one (tests).
    public var port: Int
    /// Concurrency of the downloads the server starts.
    public var downloadOptions: DownloadOptions

    public init(host: String = "127.0.0.1", port: Int = ServeOptions.defaultPort, downloadOptions: DownloadOptions = DownloadOptions()) {
        self.host = host
        self.port = port
        self.downloadOptions = downloadOptions
    }

    /// Parses `ADDR:PORT`, `[V6]:PORT`, `ADDR` or `:PORT`.
    /// - Throws: `NewsstandError` `.invalidConfiguration` naming the text.
    public init(listen text: String) throws {
        func bad() -> NewsstandError {
            NewsstandError(.invalidConfiguration, "--listen \(text.debugDescription) is not ADDR:PORT (e.g. 127.0.0.1:\(ServeOptions.defaultPort) or [::1]:\(ServeOptions.defaultPort))")
        }
        var host = text
        var port = ServeOptions.defaultPort
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw bad() }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else { throw bad() }
                port = value
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else { throw bad() }  // a bare IPv6 address needs brackets
            host = String(text[..<colon])
            guard let value = Int(text[text.index(after: colon)...]) else { throw bad() }
            port = value
        }
        if host.isEmpty { host = "127.0.0.1" }
        guard (0...65535).contains(port) else { throw bad() }
        self.init(host: host, port: port)
    }

    /// Whether the address reaches only this machine (then no token is needed).
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
