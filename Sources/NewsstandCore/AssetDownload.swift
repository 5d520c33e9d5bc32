import Foundation

/// One file of an issue, fetched over HTTP(S) (NewsstandKit's `NKAssetDownload`).
///
/// A value snapshot: the `Library` actor owns the live state and hands these out.
public struct AssetDownload: Sendable, Hashable, Identifiable {
    /// Where an asset is in its life (NewsstandKit had only "downloading"; a server tool needs more).
    public enum State: String, Codable, Sendable, Hashable, CaseIterable {
        /// Added, nothing fetched and nothing in flight.
        case pending
        /// In the saved list of downloads; bytes may be on disk in a partial file.
        case downloading
        /// The whole file is on disk and verified. For a plain file it is in the content folder; for an
        /// archive that is still to be unpacked, it waits in the library's download area.
        case downloaded
        /// The archive was extracted into the content folder.
        case unpacked
        /// The download or unpack gave up; `error` says why. `download` and `resume` retry it.
        case failed
    }

    /// What an asset is to its issue. Stored only when not ``content``, so records written before roles
    /// existed read as content.
    public enum Role: String, Codable, Sendable, Hashable, CaseIterable {
        /// The issue's own files (the default).
        case content
        /// The feed's image of the item: the cover's source, placed in the folder but not the content
        /// (a cover maker skips it when it looks for an image among the content).
        case cover
    }

    /// The stable identifier (NewsstandKit's `identifier`): the asset's identity, independent of its URL.
    public let id: String
    /// Where the asset is fetched from.
    public var url: URL
    /// The expected SHA-256 (64 lowercase hex digits), checked before the asset counts as downloaded.
    public var sha256: String?
    /// Whether an archive (detected by content) is unpacked into the content folder.
    public var unpack: Bool
    /// Request headers sent with every request of this asset (see ``AssetRequest/headers``). Secrets:
    /// show ``redactedHeaders`` instead.
    public var headers: [String: String]
    /// Where the asset is in its life.
    public var state: State
    /// Bytes received so far (the whole size once downloaded).
    public var receivedBytes: Int64
    /// The size the server announced, when it did.
    public var expectedBytes: Int64?
    /// Why the asset failed, when it did.
    public var error: String?
    /// The file's name inside the content folder once placed (plain files, kept archives).
    public var fileName: String?
    /// Whether the downloaded file was recognised as an archive.
    public var isArchive: Bool?
    /// Free-form data for the embedding app (NewsstandKit's `userInfo`).
    public var userInfo: [String: String]
    /// What the asset is to its issue: content, or the feed's cover image.
    public var role: Role = .content
    /// Where the asset is in the content folder, once it is there: the placed file of a plain
    /// (or kept-whole) download, the content folder itself for an unpacked archive, else nil. Set on the
    /// values the `Library` hands out (not stored: it depends on where the library is opened).
    public package(set) var fileURL: URL?

    /// Creates a pending asset.
    public init(
        id: String, url: URL, sha256: String? = nil, unpack: Bool = true, headers: [String: String] = [:],
        userInfo: [String: String] = [:]
    ) {
        self.id = id
        self.url = url
        self.sha256 = sha256
        self.unpack = unpack
        self.headers = headers
        self.state = .pending
        self.receivedBytes = 0
        self.expectedBytes = nil
        self.error = nil
        self.fileName = nil
        self.isArchive = nil
        self.userInfo = userInfo
    }

    /// True once the asset needs nothing more: downloaded (and placed), or unpacked.
    public var isComplete: Bool {
        switch state {
        case .unpacked: return true
        case .downloaded: return !(isArchive == true && unpack)
        case .pending, .downloading, .failed: return false
        }
    }

    /// The asset with its ``fileURL`` set, for an issue whose content folder is `contentFolder`: the
    /// placed file, or the folder itself for an unpacked archive.
    package func located(in contentFolder: String) -> AssetDownload {
        var asset = self
        switch state {
        case .unpacked:
            asset.fileURL = URL(fileURLWithPath: contentFolder, isDirectory: true)
        case .downloaded where isComplete:
            asset.fileURL = fileName.map { URL(fileURLWithPath: "\(contentFolder)/\($0)", isDirectory: false) }
        default:
            asset.fileURL = nil
        }
        return asset
    }
}
