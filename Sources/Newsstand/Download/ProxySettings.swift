import Foundation

/// The proxy to use for a URL, from `http_proxy` / `https_proxy` / `no_proxy` (either case), as curl reads them.
struct ProxySettings: Sendable {
    struct Proxy: Sendable, Hashable {
        var host: String
        var port: Int
    }

    var http: Proxy?
    var https: Proxy?
    var noProxy: [String]

    static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxySettings
    {
        func value(_ name: String) -> String? {
            environment[name.lowercased()].flatMap { $0.isEmpty ? nil : $0 }
                ?? environment[name.uppercased()].flatMap { $0.isEmpty ? nil : $0 }
        }
        func parse(_ text: String?) -> Proxy? {
            guard let text else { return nil }
            let withScheme = text.contains("://") ? text : "http://" + text
            guard let url = URL(string: withScheme), let host = url.host else { return nil }
            return Proxy(host: host, port: url.port ?? 80)
        }
        let noProxy = (value("no_proxy") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }.filter { !$0.isEmpty }
        return ProxySettings(http: parse(value("http_proxy")), https: parse(value("https_proxy")), noProxy: noProxy)
    }

    func proxy(for url: URL) -> Proxy? {
        guard let host = url.host?.lowercased() else { return nil }
        for entry in noProxy {
            if entry == "*" { return nil }
            let suffix = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if host == suffix || host.hasSuffix("." + suffix) { return nil }
        }
        return url.scheme?.lowercased() == "https" ? https : http
    }
}
