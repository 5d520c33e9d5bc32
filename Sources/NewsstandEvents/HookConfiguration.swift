import Foundation
import NewsstandCore

/// One hook of the library's `config.json`: a command run with argv (never a shell), a webhook, or a
/// desktop notification, each with the event kinds it wants.
///
/// ```json
/// {"hooks": [
///   {"name": "rescan", "exec": ["/usr/bin/curl", "-fsS", "-X", "POST", "http://jellyfin:8096/Library/Refresh"],
///    "events": ["issue.available"], "timeout": 30},
///   {"name": "hub", "webhook": "https://example.org/issues", "secret": "…", "events": ["issue.*"]},
///   {"name": "desktop", "notify": true, "events": ["issue.available", "subscription.failing"]}
/// ]}
/// ```
/// Only the `hooks` key is read here; the rest of the file belongs to the library's other settings.
public struct Hook: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        /// argv[0] is looked up on `PATH`; the arguments are passed as they are.
        case exec([String])
        case webhook(URL, secret: String)
        /// `notify-send`, where it is installed.
        case notify
    }

    /// Names the hook's position file: letters, digits, `.`, `_` and `-`.
    public var name: String
    public var action: Action
    /// Kinds (`issue.available`) or families (`issue.*`); empty for every event.
    public var events: [String]
    /// How long one run (or one webhook request) may take before it is killed (abandoned).
    public var timeout: TimeInterval

    /// Whether the hook wants events of `kind`.
    public func wants(_ kind: String) -> Bool {
        events.isEmpty
            || events.contains { $0 == kind || ($0.hasSuffix(".*") && kind.hasPrefix($0.dropLast(1))) || $0 == "*" }
    }
}

/// Reads the `hooks` section of `LIBRARY/config.json`.
package enum HookConfiguration {
    static let kinds = [
        "issue.added", "issue.available", "issue.failed", "issue.removed", "subscription.added",
        "subscription.failing", "subscription.gone", "subscription.moved", "library.low-space",
    ]

    /// The hooks configured in the file at `path`; none when the file or its `hooks` key is missing.
    /// - Throws: `.invalidHooks` naming the file and the first thing wrong with its `hooks`.
    package static func read(_ path: String) throws -> [Hook] {
        guard let data = try AtomicFile.read(path, limit: LibraryLayout.maximumConfigBytes) else { return [] }
        func bad(_ reason: String) -> NewsstandError {
            NewsstandError(.invalidHooks, "\(path): \(reason)")
        }
        // A file that is not JSON at all is the settings reader's to report, with its line, for the commands
        // that read settings (`issues config`, `download`, `sync`…); opening the library does not fail for it,
        // so `show` and `list` still answer. No event is lost meanwhile: hooks start from their acknowledged
        // position once the file reads again.
        guard let root = try? JSONSerialization.jsonObject(with: data) else { return [] }
        guard let object = root as? [String: Any] else { throw bad("the file is not a JSON object") }
        guard let section = object["hooks"] else { return [] }
        guard let entries = section as? [Any] else { throw bad("\"hooks\" is not an array") }
        var hooks: [Hook] = []
        for (index, entry) in entries.enumerated() {
            let at = "hooks[\(index)]"
            guard let fields = entry as? [String: Any] else { throw bad("\(at) is not an object") }
            let known: Set<String> = ["name", "exec", "webhook", "secret", "notify", "events", "timeout"]
            if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
                throw bad("\(at) has an unknown key \(unknown.debugDescription)")
            }
            guard let name = fields["name"] as? String, isValidName(name) else {
                throw bad("\(at).name must be 1-64 letters, digits, '.', '_' or '-'")
            }
            if hooks.contains(where: { $0.name == name }) { throw bad("\(at).name \(name.debugDescription) is used twice") }
            let actions = ["exec", "webhook", "notify"].filter { fields[$0] != nil }
            guard actions.count == 1 else { throw bad("\(at) needs exactly one of \"exec\", \"webhook\" or \"notify\"") }
            let action: Hook.Action
            var timeout: TimeInterval = 60
            switch actions[0] {
            case "exec":
                guard let argv = fields["exec"] as? [String], let first = argv.first, !first.isEmpty,
                    !argv.contains(where: { $0.contains("\u{0}") })
                else {
                    throw bad("\(at).exec must be a non-empty array of strings (argv; no shell is used)")
                }
                action = .exec(argv)
            case "webhook":
                guard let text = fields["webhook"] as? String, let url = URL(string: text),
                    ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
                else {
                    throw bad("\(at).webhook must be an http or https URL")
                }
                guard let secret = fields["secret"] as? String, !secret.isEmpty else {
                    throw bad("\(at).secret is needed to sign the webhook's requests")
                }
                action = .webhook(url, secret: secret)
                timeout = 10
            default:
                guard fields["notify"] as? Bool == true else { throw bad("\(at).notify must be true") }
                action = .notify
                timeout = 10
            }
            if fields["secret"] != nil, actions[0] != "webhook" { throw bad("\(at).secret belongs to a webhook") }
            var events: [String] = []
            if let value = fields["events"] {
                guard let list = value as? [String] else { throw bad("\(at).events must be an array of event kinds") }
                for kind in list where !isKnownKind(kind) {
                    throw bad("\(at).events: unknown event kind \(kind.debugDescription)")
                }
                events = list
            }
            if let value = fields["timeout"] {
                // JSONSerialization gives Int or Double on Linux, NSNumber elsewhere.
                let seconds = (value as? Int).map(Double.init) ?? (value as? Double) ?? (value as? NSNumber)?.doubleValue
                guard let seconds, seconds > 0, seconds <= 86_400 else {
                    throw bad("\(at).timeout must be a number of seconds between 0 and 86400")
                }
                timeout = seconds
            }
            hooks.append(Hook(name: name, action: action, events: events, timeout: timeout))
        }
        return hooks
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && !name.hasPrefix(".")
            && name.unicodeScalars.allSatisfy {
                ($0.isASCII && (CharacterSet.alphanumerics.contains($0))) || "._-".unicodeScalars.contains($0)
            }
    }

    static func isKnownKind(_ kind: String) -> Bool {
        kind == "*" || kinds.contains(kind) || (kind.hasSuffix(".*") && kinds.contains { $0.hasPrefix(kind.dropLast(1)) })
    }
}
