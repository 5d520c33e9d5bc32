/// `issues config --json`: the settings a command would run with and where each came from.
///
/// ```
/// {"reportVersion": 1,
///  "files": [{"path": "/lib/config.json", "found": true}, {"path": "~/.config/issues/config.json", "found": false}],
///  "settings": [{"key": "jobs", "value": "8", "source": "/lib/config.json"}, …]}
/// ```
/// Values are text as the command line would take them (`2M`, a list joined by `, `), null when unset;
/// header values are redacted. `source` is `command line`, `environment NAME`, a file's path, or
/// `built-in default`.
public struct ConfigReport: Codable, Sendable, Equatable {
    public struct File: Codable, Sendable, Equatable {
        public var path: String
        public var found: Bool

        public init(path: String, found: Bool) {
            self.path = path
            self.found = found
        }
    }

    public struct Setting: Codable, Sendable, Equatable {
        public var key: String
        public var value: String?
        public var source: String

        public init(key: String, value: String?, source: String) {
            self.key = key
            self.value = value
            self.source = source
        }
    }

    public var reportVersion = IssueReport.reportVersion
    /// The files looked for, the one that wins first.
    public var files: [File]
    public var settings: [Setting]

    public init(files: [File], settings: [Setting]) {
        self.files = files
        self.settings = settings
    }
}
