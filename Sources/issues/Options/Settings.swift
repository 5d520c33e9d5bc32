import Foundation
import Newsstand

/// The settings a command runs with, and where each came from: the command line, then the library's
/// config file, then the user's, then the built-in default (the environment, for the proxies, comes
/// before the files: it is set for one run). What `issues config` prints.
struct Settings: Sendable {
    enum Source: Sendable, Equatable, CustomStringConvertible {
        case commandLine
        case file(String)
        case environment(String)
        case builtIn

        var description: String {
            switch self {
            case .commandLine: return "command line"
            case .file(let path): return path
            case .environment(let name): return "environment \(name)"
            case .builtIn: return "built-in default"
            }
        }
    }

    struct Entry<Value: Sendable>: Sendable {
        var value: Value
        var source: Source
    }

    var jobs = Entry(value: 4, source: .builtIn)
    var segments = Entry<Int?>(value: nil, source: .builtIn)
    var limitRate = Entry<ByteSize?>(value: nil, source: .builtIn)
    var cacert = Entry<[String]>(value: [], source: .builtIn)
    var proxy = Entry<String?>(value: nil, source: .builtIn)
    var noProxy = Entry<String?>(value: nil, source: .builtIn)
    /// Free space under which `library.low-space` is announced; nil for never.
    var lowSpace = Entry<ByteSize?>(value: ByteSize(bytes: 1 << 30), source: .builtIn)
    /// How new issues are filed (nil: one folder per issue).
    var layoutTemplate = Entry<LayoutTemplate?>(value: nil, source: .builtIn)
    /// By lower-cased host; a host's headers come whole from one file (the library's over the user's).
    var headers: [String: Entry<[String: String]>] = [:]
    /// The files looked for, highest precedence first, and whether each was there.
    var files: [(path: String, found: Bool)] = []

    /// The user's file: `$XDG_CONFIG_HOME/issues/config.json`, else `~/.config/issues/config.json` (XDG says
    /// to ignore a relative `XDG_CONFIG_HOME`).
    static func userFile(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/issues/config.json" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/issues/config.json"
    }

    /// Reads the library's and the user's files and layers them over the defaults.
    /// - Throws: `.invalidConfiguration` for the first bad file, naming it and the line.
    static func load(library: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> Settings
    {
        var settings = Settings()
        let paths = [LibraryLayout(root: library.path).config] + (userFile(environment: environment).map { [$0] } ?? [])
        var read: [ConfigFile] = []
        for path in paths {
            let file = try ConfigFile.read(path)
            settings.files.append((path, file != nil))
            if let file { read.append(file) }
        }
        // Lowest precedence first, so each later file overrides.
        for file in read.reversed() {
            let source = Source.file(file.path)
            if let jobs = file.jobs { settings.jobs = Entry(value: jobs, source: source) }
            if let segments = file.segments { settings.segments = Entry(value: segments, source: source) }
            if let rate = file.limitRate { settings.limitRate = Entry(value: rate, source: source) }
            if let cacert = file.cacert { settings.cacert = Entry(value: cacert, source: source) }
            if let proxy = file.proxy { settings.proxy = Entry(value: proxy, source: source) }
            if let noProxy = file.noProxy { settings.noProxy = Entry(value: noProxy, source: source) }
            if let lowSpace = file.lowSpace { settings.lowSpace = Entry(value: lowSpace, source: source) }
            if let template = file.layoutTemplate { settings.layoutTemplate = Entry(value: template, source: source) }
            for (host, headers) in file.headers { settings.headers[host] = Entry(value: headers, source: source) }
        }
        if let name = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .first(where: { environment[$0] != nil })
        {
            settings.proxy = Entry(value: environment[name], source: .environment(name))
        }
        if let name = ["no_proxy", "NO_PROXY"].first(where: { environment[$0] != nil }) {
            settings.noProxy = Entry(value: environment[name], source: .environment(name))
        }
        return settings
    }

    /// These settings with what the command line gave put over them.
    func overridden(by run: DownloadRunOptions, tls: TLSOptions) -> Settings {
        var settings = self
        if let jobs = run.jobs { settings.jobs = Entry(value: jobs, source: .commandLine) }
        if let segments = run.segments { settings.segments = Entry(value: segments, source: .commandLine) }
        if let rate = run.limitRate { settings.limitRate = Entry(value: rate, source: .commandLine) }
        if !tls.caCertificateFiles.isEmpty {
            settings.cacert = Entry(value: tls.caCertificateFiles, source: .commandLine)
        }
        return settings
    }

    /// `configuration` with the CA files, proxies and headers of these settings.
    func applied(to configuration: Library.Configuration) -> Library.Configuration {
        var configuration = configuration
        configuration.trustedCertificateFiles += cacert.value.map { URL(fileURLWithPath: $0) }
        // The environment's own proxy variables are read by the engine itself; only a file's are passed.
        if case .file = proxy.source { configuration.defaultProxy = proxy.value }
        if case .file = noProxy.source { configuration.defaultNoProxy = noProxy.value }
        configuration.headersByHost = headers.mapValues(\.value)
        configuration.lowSpaceThreshold = lowSpace.value?.bytes
        configuration.layoutTemplate = layoutTemplate.value
        return configuration
    }

    func downloadOptions(_ run: DownloadRunOptions) -> DownloadOptions {
        DownloadOptions(
            jobs: jobs.value, keepArchives: run.keepArchive, rateLimit: limitRate.value?.bytes, segments: segments.value)
    }
}
