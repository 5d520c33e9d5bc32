import Foundation
import Synchronization

/// What the security middleware enforces: which `Host`s are this server (DNS rebinding), the access token
/// (beyond loopback), and this run's CSRF token.
final class SecurityPolicy: Sendable {
    /// The bound port, known once the socket is bound (0 asks the system for one).
    private let port: Atomic<Int>
    private let listenHost: String
    /// Nil on loopback: no token is asked for there.
    let accessToken: String?
    /// Every state-changing request carries it (form field `csrf`, header `X-CSRF-Token` or query `csrf`).
    /// One per run of the server: a page served before a restart must be reloaded.
    let csrfToken: String

    init(listenHost: String, port: Int, accessToken: String?) {
        self.listenHost = listenHost.lowercased()
        self.port = Atomic(port)
        self.accessToken = accessToken
        csrfToken = AccessToken.randomHex(bytes: 24)
    }

    func bound(port: Int) { self.port.store(port, ordering: .relaxed) }

    var boundPort: Int { port.load(ordering: .relaxed) }

    /// Whether `authority` (the request's `Host`) names this server: a loopback name or the listen address,
    /// with the bound port. A page of another site that rebinds its name to 127.0.0.1 sends its own name.
    func allows(authority: String) -> Bool {
        let port = boundPort
        var allowed = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
        if listenHost != "0.0.0.0" && listenHost != "::" {
            allowed.append(listenHost.contains(":") ? "[\(listenHost)]:\(port)" : "\(listenHost):\(port)")
        }
        return allowed.contains(authority.lowercased())
    }

    /// Whether `origin` (an `Origin` header, or a `Referer`'s scheme, host and port) is this server as
    /// the request addressed it.
    static func sameOrigin(_ origin: String, authority: String) -> Bool {
        guard let url = URL(string: origin), url.scheme?.lowercased() == "http", let host = url.host else { return false }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let port = url.port ?? 80
        return "\(hostPart):\(port)".lowercased() == authority.lowercased()
    }
}
