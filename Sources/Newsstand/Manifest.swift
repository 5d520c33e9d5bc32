import Foundation

/// The document stored in `library.json`: every issue, its assets and their states, and the saved
/// list of in-flight download identifiers (NewsstandKit's `downloadingAssets`).
struct Manifest: Sendable, Hashable {
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

    /// Recomputes the status of every issue from its assets and the in-flight list.
    mutating func updateStatuses() {
        let inFlight = Set(pendingDownloads)
        for i in issues.indices { issues[i].updateStatus(inFlight: inFlight) }
    }
}
