import Foundation

/// The document stored in `library.json`: every issue, its assets and their states, and the saved
/// list of in-flight download identifiers (NewsstandKit's `downloadingAssets`).
struct Manifest: Codable, Sendable, Hashable {
    /// The schema version this code writes. A manifest with a higher version is refused, never overwritten.
    static let currentVersion = 1

    var version: Int
    var issues: [Issue]
    /// Identifiers of assets whose download was started and has not finished: what `resume` picks up.
    var pendingDownloads: [String]

    init() {
        version = Manifest.currentVersion
        issues = []
        pendingDownloads = []
    }

    private struct VersionProbe: Decodable { var version: Int? }

    /// Decodes a manifest, refusing unknown future versions before looking at anything else.
    /// - Throws: `NewsstandError` `.manifestUnreadable` or `.manifestFromNewerVersion`, naming `path`.
    static func decode(_ data: Data, path: String) throws -> Manifest {
        let decoder = JSONDecoder()
        let probe: VersionProbe
        do {
            probe = try decoder.decode(VersionProbe.self, from: data)
        } catch {
            throw NewsstandError(.manifestUnreadable, "\(path) is not a valid library manifest (\(Manifest.reason(error))); it was left untouched", underlying: error)
        }
        guard let version = probe.version else {
            throw NewsstandError(.manifestUnreadable, "\(path) has no \"version\"; it was left untouched")
        }
        guard version <= currentVersion else {
            throw NewsstandError(
                .manifestFromNewerVersion,
                "\(path) has version \(version), newer than this issues understands (\(currentVersion)); it was left untouched")
        }
        do {
            let manifest = try decoder.decode(Manifest.self, from: data)
            try manifest.validate(path: path)
            return manifest
        } catch let error as NewsstandError {
            throw error
        } catch {
            throw NewsstandError(.manifestUnreadable, "\(path) is not a valid library manifest (\(Manifest.reason(error))); it was left untouched", underlying: error)
        }
    }

    /// Encodes the manifest; sorted keys keep diffs of the file readable.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Checks the invariants JSON types cannot express: unique names, folders and identifiers.
    private func validate(path: String) throws {
        var names = Set<String>()
        var folders = Set<String>()
        var ids = Set<String>()
        for issue in issues {
            guard names.insert(issue.name).inserted, folders.insert(issue.folderName).inserted else {
                throw NewsstandError(.manifestUnreadable, "\(path) lists issue \(issue.name.debugDescription) or its folder twice; it was left untouched")
            }
            for asset in issue.assets where !ids.insert(asset.id).inserted {
                throw NewsstandError(.manifestUnreadable, "\(path) lists asset \(asset.id) twice; it was left untouched")
            }
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            return context.debugDescription
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(key.stringValue) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(context.debugDescription) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default:
            return String(describing: error)
        }
    }

    // MARK: Look-ups

    func issueIndex(named name: String) -> Int? {
        issues.firstIndex { $0.name == name }
    }

    func location(ofAsset id: String) -> (issue: Int, asset: Int)? {
        for (i, issue) in issues.enumerated() {
            if let a = issue.assets.firstIndex(where: { $0.id == id }) { return (i, a) }
        }
        return nil
    }

    /// Recomputes the status of every issue (after asset changes).
    mutating func updateStatuses(ofIssuesAt indices: some Sequence<Int>) {
        let inFlight = Set(pendingDownloads)
        for i in indices { issues[i].updateStatus(inFlight: inFlight) }
    }
}
