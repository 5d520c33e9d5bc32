import Foundation
import NewsstandCore

/// The machine-readable shape of one issue: `show --json`, each element of `list --json`, and what the
/// coming event log and HTTP API carry. Its members are the issue's stored record (whose own `version`
/// is the record's) with the counts and the absolute folder in front; request header values are redacted
/// and an asset in flight shows the bytes on disk at the time.
///
/// Shape version ``reportVersion`` (the README's "Machine-readable output" lists the keys). A change that
/// removes or renames a key raises it; a new key does not.
public struct IssueReport: Codable, Sendable, Hashable {
    /// The shape's version, written as `reportVersion` by every report type.
    public static let reportVersion = 1

    public var reportVersion: Int = IssueReport.reportVersion
    public var name: String
    /// `YYYY-MM-DD`.
    public var date: String
    /// `pending`, `downloading`, `available` or `failed`.
    public var status: String
    /// The content folder's name and absolute path.
    public var folder: String
    /// A filed issue's file name before its extension (its files are in `folder`, shared); nil otherwise.
    public var file: String?
    public var directory: String
    public var assetsDone: Int
    public var assetsTotal: Int
    /// Bytes received over all assets.
    public var bytes: Int64
    public var pinned: Bool
    /// Present (true) only while a removal is under way.
    public var removing: Bool?
    public var publication: String?
    public var origin: Origin?
    /// The issue's content: what the publisher's item offers (enclosures, transcripts, chapters).
    public var assets: [AssetReport]
    /// The feed's image of the item, fetched as the cover's source: a download of the issue like its assets
    /// (counted in ``assetsDone``, ``assetsTotal`` and ``bytes``), but not its content, so not among
    /// ``assets``. Absent when the feed has no image.
    public var coverSource: AssetReport?
    /// The stored record's own format version.
    public var version: Int
    /// What the feed said of the item (title, link, description); absent for issues added by hand.
    public var source: Source?
    /// The cover and its thumbnails (`show --json` and the sidecar; `list --json` reads only the catalog and
    /// leaves it out). Absent until a cover is made.
    public var cover: CoverReport?

    /// A feed item's own words, as the issue keeps them.
    public struct Source: Codable, Sendable, Hashable {
        public var title: String?
        public var link: String?
        public var description: String?
    }

    /// Where a subscribed issue came from.
    public struct Origin: Codable, Sendable, Hashable {
        public var subscription: String
        public var item: String
        /// How the item was recognised: `id`, `enclosure` or `title-date`.
        public var matched: Issue.ItemMatch
    }
}

/// One asset of an ``IssueReport``.
public struct AssetReport: Codable, Sendable, Hashable {
    public var id: String
    public var url: String
    /// `pending`, `downloading`, `downloaded`, `unpacked` or `failed`.
    public var state: String
    public var receivedBytes: Int64
    /// Always present: null while unknown.
    public var expectedBytes: Int64?
    /// Always present: null unless the last attempt failed.
    public var error: String?
    public var fileName: String?
    public var sha256: String?
    public var unpack: Bool
    public var isArchive: Bool?
    /// Request header names with their values redacted.
    public var headers: [String: String]?
    public var userInfo: [String: String]?
    /// `cover` for the feed's image of the item (``IssueReport/coverSource``); absent for content.
    public var role: String?

    private enum CodingKeys: String, CodingKey {
        case id, url, state, receivedBytes, expectedBytes, error, fileName, sha256, unpack, isArchive, headers, userInfo
        case role
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(url, forKey: .url)
        try c.encode(state, forKey: .state)
        try c.encode(receivedBytes, forKey: .receivedBytes)
        // Written as null rather than left out, as `--json` has always promised.
        try c.encode(expectedBytes, forKey: .expectedBytes)
        try c.encode(error, forKey: .error)
        try c.encodeIfPresent(fileName, forKey: .fileName)
        try c.encodeIfPresent(sha256, forKey: .sha256)
        try c.encode(unpack, forKey: .unpack)
        try c.encodeIfPresent(isArchive, forKey: .isArchive)
        try c.encodeIfPresent(headers, forKey: .headers)
        try c.encodeIfPresent(userInfo, forKey: .userInfo)
        try c.encodeIfPresent(role, forKey: .role)
    }
}

extension IssueReport {
    /// The report of `issue`, whose content folder is `directory`. Header values are redacted here.
    package init(_ issue: Issue, directory: String, recordVersion: Int) {
        let summary = IssueSummary(issue)
        name = issue.name
        date = issue.date.description
        status = issue.status.rawValue
        folder = issue.folderName
        file = issue.fileStem
        self.directory = directory
        assetsDone = summary.assetsDone
        assetsTotal = summary.assetsTotal
        bytes = summary.bytes
        pinned = issue.isPinned
        removing = issue.isBeingRemoved ? true : nil
        publication = issue.publication
        origin = issue.origin.map {
            Origin(subscription: $0.subscriptionID, item: $0.itemID, matched: $0.matchedBy)
        }
        let split = issue.assetsAndCoverSource
        assets = split.content.map(AssetReport.init)
        coverSource = split.cover.map(AssetReport.init)
        version = recordVersion
        source = issue.source.map { Source(title: $0.title, link: $0.link, description: $0.description) }
        cover = nil
    }
}

extension AssetReport {
    package init(_ asset: AssetDownload) {
        id = asset.id
        url = asset.url.absoluteString
        state = asset.state.rawValue
        receivedBytes = asset.receivedBytes
        expectedBytes = asset.expectedBytes
        error = asset.error
        fileName = asset.fileName
        sha256 = asset.sha256
        unpack = asset.unpack
        isArchive = asset.isArchive
        headers = asset.headers.isEmpty ? nil : asset.redactedHeaders
        userInfo = asset.userInfo.isEmpty ? nil : asset.userInfo
        role = asset.role == .content ? nil : asset.role.rawValue
    }
}
