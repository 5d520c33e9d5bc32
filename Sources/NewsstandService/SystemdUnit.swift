import Foundation
import NewsstandCore

/// The systemd unit that runs `issues serve` for one library: `Type=notify` (READY when the scheduler and
/// server are up), a watchdog, restart on failure, and hardening that still lets it write the library.
public struct SystemdUnit: Sendable, Hashable {
    /// The unit's file name, `issues.service` or `issues-NAME.service`.
    public var name: String
    public var executable: String
    public var library: String
    /// A user unit (`systemctl --user`) or a system one.
    public var user: Bool
    /// Run without the web server (`serve --no-http`).
    public var headless: Bool
    /// `--listen ADDR:PORT`, when not the default.
    public var listen: String?

    public init(name: String, executable: String, library: String, user: Bool, headless: Bool, listen: String? = nil) {
        self.name = name
        self.executable = executable
        self.library = library
        self.user = user
        self.headless = headless
        self.listen = listen
    }

    /// Where the unit file goes: `~/.config/systemd/user` (or `$XDG_CONFIG_HOME`) for a user unit,
    /// `/etc/systemd/system` otherwise.
    public static func directory(user: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard user else { return "/etc/systemd/system" }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return config + "/systemd/user"
    }

    /// The unit's text. Paths are quoted for systemd's command-line syntax, never passed through a shell.
    public var text: String {
        var arguments = [executable, "serve", "--library", library]
        if headless { arguments.append("--no-http") }
        if let listen { arguments += ["--listen", listen] }
        let exec = arguments.map(Self.quoted).joined(separator: " ")
        return """
            # Written by `issues service install`; `issues service uninstall` removes it.
            [Unit]
            Description=issues: keeps the library \(Self.escapedSpecifiers(library)) current\(headless ? "" : " and serves it")
            Documentation=man:issues(1)
            After=network-online.target
            Wants=network-online.target

            [Service]
            Type=notify
            NotifyAccess=main
            ExecStart=\(exec)
            ExecReload=/bin/kill -HUP $MAINPID
            Restart=on-failure
            RestartSec=10s
            WatchdogSec=2min
            TimeoutStopSec=30s
            # systemd's default soft limit (1,024) is too few open files for a server with many clients.
            LimitNOFILE=65536
            # One line per event on stderr; journald adds the time.
            StandardError=journal
            # Hardening that still lets it write the library.
            NoNewPrivileges=yes
            ProtectSystem=strict
            ReadWritePaths=\(Self.quoted(library))
            PrivateTmp=yes
            ProtectControlGroups=yes
            ProtectKernelModules=yes
            ProtectKernelTunables=yes
            RestrictNamespaces=yes
            RestrictRealtime=yes
            RestrictSUIDSGID=yes
            LockPersonality=yes
            RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
            SystemCallArchitectures=native
            UMask=0077

            [Install]
            WantedBy=\(user ? "default.target" : "multi-user.target")

            """
    }

    /// A word of a systemd command line: double-quoted, with `\`, `"`, `%` and `$` escaped (systemd expands
    /// `%` specifiers and `$` variables even inside quotes).
    static func quoted(_ word: String) -> String {
        var out = "\""
        for character in word {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            case "$": out += "$$"
            default: out.append(character)
            }
        }
        return out + "\""
    }

    /// Text for a field where only `%` specifiers are expanded.
    static func escapedSpecifiers(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%%").filter { $0 != "\n" && $0 != "\r" }
    }
}
