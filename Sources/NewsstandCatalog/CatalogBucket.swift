import Foundation
import NewsstandCore

/// One bucket file of the catalog, `.catalog/issues-D/<first D hex digits of the key>.jsonl`: the
/// records of the issues whose keys start with those digits, and the claims of folder names whose keys
/// do, one JSON line each, sorted by key:
/// ```
/// {"key":"3fa9…","issue":{"assets":[…],"date":"2026-11-20","folder":"…","name":"…",…}}
/// {"key":"3fb0…","claim":"81c2…"}          the folder name with key 3fb0… belongs to issue 81c2…
/// ```
/// A bucket holds a few dozen lines (the catalog splits every bucket into sixteen when one grows past
/// ``Catalog/splitBytes``), so a change reads and rewrites a few tens of kilobytes whatever the size of
/// the library, and 100,000 issues live in about 4,000 files instead of 100,000.
package struct CatalogBucket {
    package enum Kind: Hashable {
        case issue
        case claim
    }

    package struct Line {
        package var kind: Kind
        var key: String
        /// The whole line, without its newline.
        var bytes: [UInt8]
        /// Where the value after `"issue":` or `"claim":` starts.
        var valueStart: Int
    }

    let path: String
    package private(set) var lines: [Line]

    /// Reads the bucket at `path`; a missing file is an empty bucket.
    /// - Throws: `.manifestUnreadable` naming the file when a line is not one of the two shapes.
    static func load(_ path: String) throws -> CatalogBucket {
        guard let data = try AtomicFile.read(path) else { return CatalogBucket(path: path, lines: []) }
        return try CatalogBucket(path: path, data: data)
    }

    init(path: String, lines: [Line]) {
        self.path = path
        self.lines = lines
    }

    package init(path: String, data: Data) throws {
        self.path = path
        var lines: [Line] = []
        try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if !line.isEmpty {
                    do {
                        lines.append(try CatalogBucket.parse(line))
                    } catch {
                        throw NewsstandError(
                            .manifestUnreadable,
                            "\(path) is not a valid catalog bucket at byte \(start) (\(error)); it was left untouched",
                            underlying: error)
                    }
                }
                start = end + 1
            }
        }
        self.lines = lines
    }

    /// Reads a line's kind and key (its record is checked when it is decoded).
    private static func parse(_ line: UnsafeBufferPointer<UInt8>) throws -> Line {
        var reader = JSONReader(bytes: line)
        try reader.expect(UInt8(ascii: "{"))
        guard try reader.nextKey(first: true) == "key" else { throw reader.error("the line does not start with its key") }
        let key = try reader.readString()
        guard CatalogIndex.Key(key) != nil else { throw reader.error("\(key.debugDescription) is not a key") }
        let kind: Kind
        switch try reader.nextKey(first: false) {
        case "issue"?: kind = .issue
        case "claim"?: kind = .claim
        default: throw reader.error("expected \"issue\" or \"claim\"")
        }
        let valueStart = reader.i
        if kind == .claim {
            guard CatalogIndex.Key(try reader.readString()) != nil else { throw reader.error("a claim names no issue key") }
        } else {
            try reader.skipValue()
        }
        guard try reader.nextKey(first: false) == nil, reader.peek() == nil else {
            throw reader.error("unexpected data after the line's value")
        }
        return Line(kind: kind, key: key, bytes: Array(line), valueStart: valueStart)
    }

    /// The issue stored under `key`, or nil.
    func issue(_ key: String) throws -> Issue? {
        guard let line = lines.first(where: { $0.kind == .issue && $0.key == key }) else { return nil }
        return try CatalogBucket.decodeIssue(line, path: path)
    }

    /// Where the asset with `id` of the issue stored under `key` stands, or nil (see ``IssueRecord/decodeAsset(_:ofIssueNamed:in:path:)``).
    func asset(_ id: String, ofIssue key: String, named name: String) throws -> AssetStanding? {
        guard let line = lines.first(where: { $0.kind == .issue && $0.key == key }) else { return nil }
        return try line.bytes[line.valueStart..<(line.bytes.count - 1)].withUnsafeBufferPointer {
            try IssueRecord.decodeAsset(id, ofIssueNamed: name, in: $0, path: path)
        }
    }

    /// Every issue with its key.
    func issues() throws -> [(key: String, issue: Issue)] {
        try lines.filter { $0.kind == .issue }.map { ($0.key, try CatalogBucket.decodeIssue($0, path: path)) }
    }

    /// The key of the issue that claims the folder name with `key`, or nil.
    func claim(_ key: String) -> String? {
        lines.first(where: { $0.kind == .claim && $0.key == key }).flatMap(CatalogBucket.owner)
    }

    /// Every claim: folder key → issue key.
    package func claims() -> [(key: String, owner: String)] {
        // Each claim line read where it stands: looking each one up again by key was quadratic in the bucket.
        lines.compactMap { line in line.kind == .claim ? CatalogBucket.owner(line).map { (line.key, $0) } : nil }
    }

    /// The issue key a claim line names.
    private static func owner(_ line: Line) -> String? {
        // Checked when the line was read: a quoted 32-digit key.
        let owner = String(decoding: line.bytes[(line.valueStart + 1)..<(line.valueStart + 33)], as: UTF8.self)
        return CatalogIndex.Key(owner) != nil ? owner : nil
    }

    package static func decodeIssue(_ line: Line, path: String) throws -> Issue {
        // The record runs from its value's start to the line's closing brace (checked when read).
        try line.bytes[line.valueStart..<(line.bytes.count - 1)].withUnsafeBufferPointer {
            try IssueRecord.decode($0, path: path)
        }
    }

    /// Puts (or, with nil, removes) the issue line for `key`.
    mutating func set(issue: Issue?, key: String) {
        if let issue {
            var writer = JSONWriter(capacity: 1024)
            writer.raw("{\"key\":")
            writer.string(key)
            writer.raw(",\"issue\":")
            let start = writer.bytes.count
            issue.write(to: &writer)
            writer.raw("}")
            replace(.issue, key, with: writer.bytes, valueStart: start)
            return
        }
        replace(.issue, key, with: nil, valueStart: 0)
    }

    /// Puts (or, with nil, removes) the claim line for the folder key `key`.
    mutating func set(claim owner: String?, key: String) {
        let prefix = "{\"key\":\"\(key)\",\"claim\":"
        replace(
            .claim, key, with: owner.map { Array((prefix + "\"\($0)\"}").utf8) }, valueStart: prefix.utf8.count)
    }

    private mutating func replace(_ kind: Kind, _ key: String, with bytes: [UInt8]?, valueStart: Int) {
        lines.removeAll { $0.kind == kind && $0.key == key }
        if let bytes { lines.append(Line(kind: kind, key: key, bytes: bytes, valueStart: valueStart)) }
    }

    var isEmpty: Bool { lines.isEmpty }

    /// Adds a line read from another bucket (a split).
    mutating func append(_ line: Line) {
        lines.append(line)
    }

    /// The file's bytes: lines sorted by key (issues before claims of an equal key).
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(lines.reduce(0) { $0 + $1.bytes.count + 1 })
        for line in lines.sorted(by: { ($0.key, $0.kind == .claim ? 1 : 0) < ($1.key, $1.kind == .claim ? 1 : 0) }) {
            out += line.bytes
            out.append(0x0A)
        }
        return out
    }
}
