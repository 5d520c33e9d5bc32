import Foundation
import NewsstandCore

/// One bucket file of a version 2 or 3 catalog, read by its upgrade (``CatalogUpgrade``),
/// `.catalog/issues-D/<first D hex digits of the key>.jsonl`: the
/// records of the issues whose keys start with those digits, and the claims of folder names whose keys
/// do, one JSON line each, sorted by key:
/// ```
/// {"key":"3fa9…","issue":{"assets":[…],"date":"2026-11-20","folder":"…","name":"…",…}}
/// {"key":"3fb0…","claim":"81c2…"}          the folder name with key 3fb0… belongs to issue 81c2…
/// ```
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
        guard CatalogIndexKey.isKey(key) else { throw reader.error("\(key.debugDescription) is not a key") }
        let kind: Kind
        switch try reader.nextKey(first: false) {
        case "issue"?: kind = .issue
        case "claim"?: kind = .claim
        default: throw reader.error("expected \"issue\" or \"claim\"")
        }
        let valueStart = reader.i
        if kind == .claim {
            guard CatalogIndexKey.isKey(try reader.readString()) else { throw reader.error("a claim names no issue key") }
        } else {
            try reader.skipValue()
        }
        guard try reader.nextKey(first: false) == nil, reader.peek() == nil else {
            throw reader.error("unexpected data after the line's value")
        }
        return Line(kind: kind, key: key, bytes: Array(line), valueStart: valueStart)
    }

    /// Every issue with its key.
    package func issues() throws -> [(key: String, issue: Issue)] {
        try lines.filter { $0.kind == .issue }.map { ($0.key, try CatalogBucket.decodeIssue($0, path: path)) }
    }

    static func decodeIssue(_ line: Line, path: String) throws -> Issue {
        // The record runs from its value's start to the line's closing brace (checked when read).
        try line.bytes[line.valueStart..<(line.bytes.count - 1)].withUnsafeBufferPointer {
            try IssueRecord.decode($0, path: path)
        }
    }
}

extension JSONReader {
    /// A string value (after whitespace), or throws.
    mutating func readString() throws -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
        return try string()
    }
}
