import Foundation

/// Something that happened to one asset's download, as read by the body of
/// ``Library/download(issues:options:isolation:_:)`` or ``Library/resumeDownloads(options:isolation:_:)``.
public struct DownloadEvent: Sendable {
    /// What happened.
    public enum Kind: Sendable {
        /// A request is going out; `resumingFrom` bytes are already on disk.
        case started(resumingFrom: Int64, expectedBytes: Int64?)
        /// Bytes arrived. Reported a few times a second, not per chunk, and once more at 100 % when a
        /// transfer completes (`receivedBytes == expectedBytes`, the file's whole size).
        case progress(receivedBytes: Int64, expectedBytes: Int64?, bytesPerSecond: Double)
        /// An attempt failed and will be retried after `delay`.
        case retrying(attempt: Int, delay: Duration, reason: String)
        /// The archive is being unpacked into the issue's folder.
        case unpacking
        /// The asset is complete (downloaded and placed, or unpacked); its `fileURL` says where it is.
        case finished(AssetDownload)
        /// The asset gave up; the error is also kept in the catalog.
        case failed(NewsstandError)
        /// Another process holds this asset's download; this run leaves it alone.
        case skipped(reason: String)
    }

    /// The asset's identifier.
    public var assetID: String
    /// The name of the asset's issue.
    public var issueName: String
    /// The asset's URL.
    public var url: URL
    /// What happened.
    public var kind: Kind

    package init(assetID: String, issueName: String, url: URL, kind: Kind) {
        self.assetID = assetID
        self.issueName = issueName
        self.url = url
        self.kind = kind
    }
}

/// The outcome of a download run.
public struct DownloadSummary: Sendable, Hashable {
    /// Identifiers of assets that completed in this run.
    public var finished: [String] = []
    /// Identifiers of assets that failed, with their error text.
    public var failed: [String: String] = [:]
    /// Identifiers left alone because another process is downloading them.
    public var skipped: [String] = []
    /// Identifiers left in the saved list because the run was cancelled.
    public var interrupted: [String] = []
    /// Bytes received over the network in this run.
    public var bytesReceived: Int64 = 0

    public init() {}
}
