import Foundation
import Newsstand

/// One config file (`LIBRARY/config.json` or `$XDG_CONFIG_HOME/issues/config.json`), read and checked.
///
/// JSON, read with the catalog's own reader so that a mistake has a byte position, shown as a line:
/// ```
/// {"jobs": 8, "segments": 4, "limit-rate": "2M", "cacert": "ca.pem", "low-space": "5G",
///  "proxy": "http://proxy:3128", "no-proxy": "localhost,.lan",
///  "headers": {"paywall.example": {"Cookie": "session=…"}},
///  "hooks": …, "serve": …}
/// ```
/// Keys are the command-line options' names. `hooks` and `serve` belong to other parts of the program and
/// are passed over untouched; any other key is refused, so a typo does not silently do nothing.
struct ConfigFile: Sendable {
    var path: String
    var jobs: Int?
    var segments: Int?
    var limitRate: ByteSize?
    /// Absolute paths; a relative one is taken from the file's own folder.
    var cacert: [String]?
    var proxy: String?
    var noProxy: String?
    /// By lower-cased host.
    var headers: [String: [String: String]] = [:]
    /// `library.low-space` below this many free bytes; `.some(nil)` for `"off"`.
    var lowSpace: ByteSize??
    /// How new issues are filed (`"layout-template": "{publication}/{date} {title}.{ext}"`).
    var layoutTemplate: LayoutTemplate?

    static let settingKeys = [
        "jobs", "segments", "limit-rate", "cacert", "proxy", "no-proxy", "headers", "low-space", "layout-template",
    ]
    /// Keys other parts of the program read from the same file.
    static let passedThroughKeys: Set<String> = ["hooks", "serve"]

    /// Reads the file at `path`; nil when there is none.
    /// - Throws: `.invalidConfiguration`, one line naming the file and the line of the mistake.
    static func read(_ path: String) throws -> ConfigFile? {
        let data: Data
        do {
            guard let read = try AtomicFile.read(path, limit: LibraryLayout.maximumConfigBytes) else { return nil }
            data = read
        } catch let error as NewsstandError {
            throw NewsstandError(.invalidConfiguration, "cannot read the config file \(path): \(error.message)")
        }
        return try data.withUnsafeBytes { raw in
            try parse(raw.bindMemory(to: UInt8.self), path: path)
        }
    }

    // Over 80 lines on purpose: one scan over the bytes (sections, keys, values, the line of each error) with
    // one cursor; split, each helper would take the cursor and the file being built inout.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws -> ConfigFile {
        func line(_ offset: Int) -> Int {
            1 + bytes.prefix(min(offset, bytes.count)).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }
        func failure(_ offset: Int, _ reason: String) -> NewsstandError {
            NewsstandError(.invalidConfiguration, "\(path), line \(line(offset)): \(reason)")
        }
        var file = ConfigFile(path: path)
        var reader = JSONReader(bytes: bytes)
        var values: [(key: String, value: JSONValue, offset: Int)] = []
        do {
            try reader.expect(UInt8(ascii: "{"))
            var first = true
            var seen = Set<String>()
            while true {
                guard let key = try reader.nextKey(first: first) else { break }
                let keyOffset = reader.i  // just past the key's colon: the key's own line
                first = false
                guard seen.insert(key).inserted else { throw failure(keyOffset, "\(key.debugDescription) is given twice") }
                guard settingKeys.contains(key) || passedThroughKeys.contains(key) else {
                    throw failure(
                        keyOffset,
                        "unknown key \(key.debugDescription) (known: \((settingKeys + passedThroughKeys.sorted()).joined(separator: ", ")))")
                }
                let offset = reader.i
                let value = try reader.readValue()
                if settingKeys.contains(key) { values.append((key, value, offset)) }
            }
            if reader.peek() != nil { throw reader.error("unexpected data after the settings object") }
        } catch let error as JSONSyntaxError {
            throw failure(error.offset, "not valid JSON: \(error.reason)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        for (key, value, offset) in values {
            func bad(_ expected: String) -> NewsstandError { failure(offset, "\(key.debugDescription) must be \(expected)") }
            switch (key, value) {
            case ("jobs", .integer(let n)) where (1...256).contains(n): file.jobs = Int(n)
            case ("jobs", _): throw bad("a whole number from 1 to 256")
            case ("segments", .integer(let n)) where (1...16).contains(n): file.segments = Int(n)
            case ("segments", _): throw bad("a whole number from 1 to 16")
            case ("limit-rate", .integer(let n)) where n >= 1: file.limitRate = ByteSize(bytes: n)
            case ("limit-rate", .string(let text)):
                guard let size = ByteSize(argument: text), size.bytes >= 1 else { throw bad("a rate such as \"500K\" or \"2M\"") }
                file.limitRate = size
            case ("limit-rate", _): throw bad("a rate such as \"500K\" or \"2M\"")
            case ("cacert", .string(let one)): file.cacert = [one]
            case ("cacert", .array(let many)):
                file.cacert = try many.map { item -> String in
                    guard case .string(let text) = item else { throw bad("a file name or a list of file names") }
                    return text
                }
            case ("cacert", _): throw bad("a file name or a list of file names")
            case ("proxy", .string(let text)) where !text.isEmpty: file.proxy = text
            case ("proxy", _): throw bad("a proxy URL such as \"http://proxy:3128\"")
            case ("no-proxy", .string(let text)): file.noProxy = text
            case ("no-proxy", _): throw bad("a list of hosts as no_proxy takes it (\"localhost,.lan\")")
            case ("headers", .object(let hosts)):
                for (host, headers) in hosts {
                    guard case .object(let fields) = headers, !host.isEmpty else {
                        throw bad("an object of host names, each with an object of headers")
                    }
                    var own: [String: String] = [:]
                    for (name, value) in fields {
                        guard case .string(let text) = value else {
                            throw failure(offset, "the header \(name.debugDescription) of \(host) must be a string")
                        }
                        if let problem = RequestHeaders.problem(name: name, value: text) {
                            throw failure(offset, "the header \(name.debugDescription) of \(host) \(problem)")
                        }
                        own[name] = text
                    }
                    file.headers[host.lowercased()] = own
                }
            case ("headers", _): throw bad("an object of host names, each with an object of headers")
            case ("low-space", .string("off")): file.lowSpace = .some(nil)
            case ("low-space", .string(let text)):
                guard let size = ByteSize(argument: text), size.bytes >= 1 else { throw bad("a size such as \"5G\", or \"off\"") }
                file.lowSpace = size
            case ("low-space", .integer(let n)) where n >= 1: file.lowSpace = ByteSize(bytes: n)
            case ("low-space", _): throw bad("a size such as \"5G\", or \"off\"")
            case ("layout-template", .string(let text)):
                do {
                    file.layoutTemplate = try LayoutTemplate(text)
                } catch let error as NewsstandError {
                    throw failure(offset, error.message)
                }
            case ("layout-template", _): throw bad("a template such as \"{publication}/{date} {title}.{ext}\"")
            default: break
            }
            if key == "cacert", let files = file.cacert {
                file.cacert = files.map { $0.hasPrefix("/") ? $0 : folder + "/" + $0 }
                for ca in file.cacert ?? [] where !FileManager.default.isReadableFile(atPath: ca) {
                    throw failure(offset, "the CA file \(ca) does not exist or cannot be read")
                }
            }
        }
        return file
    }
}
