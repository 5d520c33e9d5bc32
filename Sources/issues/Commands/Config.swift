import ArgumentParser
import Foundation
import Newsstand

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the settings commands run with, and where each came from.",
        discussion: """
            Settings come from the command line, then the library's config.json, then the user's \
            ($XDG_CONFIG_HOME/issues/config.json, else ~/.config/issues/config.json), then the built-in \
            defaults; the proxy variables of the environment come before the files. A config file is a JSON \
            object whose keys are the options' names: "jobs", "segments", "limit-rate" ("2M"), "cacert" (a \
            file or a list; relative to the file's folder), "proxy", "no-proxy", "headers" (an object of \
            host names, each with its headers), "low-space" (free space under which the event \
            library.low-space is announced, "1G" by default, or "off") and "layout-template" (how new issues \
            are filed: "{publication}/{date} {title}.{ext}"). "hooks" and "serve" are read by other parts of \
            issues. Give \
            download options here to see how they combine.
            """)

    @OptionGroup var libraryOptions: LibraryOptions
    @OptionGroup var downloadOptions: DownloadRunOptions
    @OptionGroup var tls: TLSOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let settings = try Settings.load(library: libraryOptions.resolvedURL()).overridden(by: downloadOptions, tls: tls)
        var rows: [ConfigReport.Setting] = []
        func add<Value>(_ key: String, _ entry: Settings.Entry<Value>, _ text: (Value) -> String?) {
            rows.append(.init(key: key, value: text(entry.value), source: entry.source.description))
        }
        add("jobs", settings.jobs) { String($0) }
        add("segments", settings.segments) { $0.map(String.init) }
        add("limit-rate", settings.limitRate) { $0?.description }
        add("cacert", settings.cacert) { $0.isEmpty ? nil : $0.joined(separator: ", ") }
        add("proxy", settings.proxy) { $0.map(URLCredentials.redact) }
        add("no-proxy", settings.noProxy) { $0 }
        add("low-space", settings.lowSpace) { $0?.description ?? "off" }
        add("layout-template", settings.layoutTemplate) { $0?.text }
        for host in settings.headers.keys.sorted() {
            guard let entry = settings.headers[host] else { continue }
            add("headers \(host)", entry) { headers in
                headers.keys.sorted { $0.lowercased() < $1.lowercased() }
                    .map { "\($0): \(RequestHeaders.redact(headers[$0] ?? ""))" }.joined(separator: "; ")
            }
        }
        let report = ConfigReport(
            files: settings.files.map { ConfigReport.File(path: $0.path, found: $0.found) }, settings: rows)
        if output.json {
            Terminal.output(try ReportJSON.text(report))
            return
        }
        Terminal.output(
            TableRenderer.table(
                header: ["SETTING", "VALUE", "FROM"],
                rows: report.settings.map { [$0.key, $0.value ?? "-", $0.source] }))
        for file in report.files {
            Terminal.output("\(file.found ? "read" : "no file") \(file.path)")
        }
    }
}
