import Foundation
import NewsstandCore

/// `issue.json`, written in each issue's folder so that a folder copied elsewhere still says what it is:
/// the issue's name, date, publication and subscription, the feed item it came from, its files and its
/// cover. Rewritten atomically whenever the issue changes (``Library/writeSidecar(for:)``).
///
/// Shape version ``sidecarVersion`` (key `sidecarVersion`): a change that removes or renames a key raises
/// it, a new key does not. The key also tells the library's own file from an `issue.json` of the content.
public struct IssueSidecar: Codable, Sendable, Hashable {
    /// The shape's version.
    public static let sidecarVersion = 1
    /// The sidecar's name in the issue's folder.
    public static let fileName = "issue.json"

    public var sidecarVersion: Int = IssueSidecar.sidecarVersion
    public var name: String
    /// `YYYY-MM-DD`.
    public var date: String
    /// The publication: the issue's own, else its subscription's name, else derived from its name.
    public var publication: String
    /// The subscription the issue came from: its identifier and its name when known.
    public var subscription: Subscription?
    /// The feed item the issue came from.
    public var item: Item?
    /// The issue's files, in the order they were added.
    public var assets: [Asset]
    /// The cover and its thumbnails, once made.
    public var cover: CoverReport?

    public struct Subscription: Codable, Sendable, Hashable {
        public var id: String
        public var name: String?
    }

    /// The feed item's own words and identity.
    public struct Item: Codable, Sendable, Hashable {
        public var title: String?
        public var link: String?
        public var description: String?
        /// The item's identity in its feed (its guid or id).
        public var guid: String
    }

    public struct Asset: Codable, Sendable, Hashable {
        /// The placed file's name in the folder; absent for an unpacked archive (its files are the folder's)
        /// and for an asset not downloaded yet.
        public var file: String?
        public var url: String
        /// Bytes received (the whole size once downloaded).
        public var size: Int64
        /// The SHA-256 of the placed file (computed once, after the download run that placed it), else the one
        /// given; absent until then.
        public var sha256: String?
        /// The file's media type, from its name (`application/pdf`); absent when unknown.
        public var type: String?
        /// `pending`, `downloading`, `downloaded`, `unpacked` or `failed`.
        public var state: String
        /// `cover` for the feed's image of the item; absent for content.
        public var role: String?
    }
}

extension IssueSidecar {
    /// The sidecar of `issue` as it stands, with the cover given. The digests of files already hashed in
    /// `previous` are reused while the size is the same; a new placed file is hashed only when `hashing` (the
    /// library's pass after a download run, and cover making, do; the catalog's commit hook does not: it runs
    /// under the catalog's lock, and hashing there made every download wait for it).
    package init(
        _ issue: Issue, subscriptionName: String?, cover: CoverReport?, previous: IssueSidecar?, directory: String,
        hashing: Bool
    ) {
        name = issue.name
        date = issue.date.description
        // A subscribed issue belongs to its subscription's publication unless it names its own.
        publication = issue.publication ?? subscriptionName ?? issue.publicationName
        subscription = issue.origin.map { Subscription(id: $0.subscriptionID, name: subscriptionName) }
        item = issue.origin.map {
            Item(title: issue.source?.title, link: issue.source?.link, description: issue.source?.description, guid: $0.itemID)
        }
        self.cover = cover
        let known = Dictionary(
            (previous?.assets ?? []).compactMap { asset in asset.file.map { ($0, asset) } }, uniquingKeysWith: { a, _ in a })
        assets = issue.assets.map { asset in
            let placed = asset.state == .downloaded && asset.isComplete ? asset.fileName : nil
            var digest = asset.sha256
            if let placed {
                if let old = known[placed], old.size == asset.receivedBytes, let hash = old.sha256 {
                    digest = hash
                } else if digest == nil, hashing {
                    digest = FileDigest.sha256(of: "\(directory)/\(placed)")
                }
            }
            return Asset(
                file: placed, url: asset.url.absoluteString, size: asset.receivedBytes, sha256: digest,
                type: MediaType.of(placed ?? asset.url.lastPathComponent), state: asset.state.rawValue,
                role: asset.role == .content ? nil : asset.role.rawValue)
        }
    }
}

/// The media type of a file from its extension: what a reader of the sidecar needs to open it.
enum MediaType {
    static func of(_ fileName: String) -> String? { MediaTypes.type(ofFileNamed: fileName) }
}
