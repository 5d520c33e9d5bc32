import Foundation
import Newsstand

/// What `show` prints of an issue (its `--json` form is written by the library).
struct IssueReport {
    var name: String
    var date: String
    var status: String
    var directory: String
    var assetsDone: Int
    var assetsTotal: Int
    var bytes: Int64
    var assets: [AssetReport]
    /// Where a subscribed issue came from: the subscription's name and the item, and how it was matched.
    var origin: String?
    var isPinned: Bool
    var publication: String
    var cover: CoverReport?

    init(_ issue: Issue, library: Library, subscriptionName: String? = nil) {
        name = issue.name
        date = issue.date.description
        status = issue.status.rawValue
        directory = library.contentURL(for: issue).path
        isPinned = issue.isPinned
        publication = issue.publicationName
        assets = issue.assets.map { AssetReport($0, library: library) }
        assetsDone = issue.assets.filter(\.isComplete).count
        assetsTotal = issue.assets.count
        cover = library.cover(of: issue)
        if let from = issue.origin {
            let matched = from.matchedBy == .id ? "" : ", recognised by \(from.matchedBy.rawValue) after its id changed"
            origin = "\(subscriptionName.map { $0.debugDescription } ?? "subscription \(from.subscriptionID)"), item \(from.itemID.debugDescription)\(matched)"
        }
        // Sizes come from outside: a sum that would overflow shows the largest value instead of trapping.
        bytes = assets.reduce(Int64(0)) { total, asset in
            let (sum, overflow) = total.addingReportingOverflow(asset.receivedBytes)
            return overflow ? .max : sum
        }
    }
}

/// What `show` prints of an asset.
struct AssetReport {
    var id: String
    var url: String
    var state: String
    var receivedBytes: Int64
    var expectedBytes: Int64?
    var error: String?
    var sha256: String?
    var unpack: Bool
    var fileName: String?
    var isCoverSource: Bool
    /// The request headers, values redacted, sorted by name.
    var headers: [(name: String, value: String)]

    init(_ asset: AssetDownload, library: Library) {
        id = asset.id
        url = asset.url.absoluteString
        state = asset.state.rawValue
        // A download in flight (here or in another process) is measured on disk, not in the catalog.
        receivedBytes =
            asset.state == .downloading
            ? (library.bytesOnDisk(assetID: asset.id) ?? asset.receivedBytes) : asset.receivedBytes
        expectedBytes =
            asset.expectedBytes ?? (asset.state == .downloading ? library.expectedBytesOnDisk(assetID: asset.id) : nil)
        error = asset.error
        sha256 = asset.sha256
        unpack = asset.unpack
        fileName = asset.fileName
        isCoverSource = asset.role == .cover
        headers = asset.redactedHeaders.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { ($0.key, $0.value) }
    }
}
