import Foundation
import Newsstand

/// The `--json` shape of an issue (SPEC: name, date, status, directory, assets, …).
struct IssueReport: Encodable {
    var name: String
    var date: String
    var status: String
    var directory: String
    var assetsDone: Int
    var assetsTotal: Int
    var bytes: Int64
    var assets: [AssetReport]

    init(_ issue: Issue, library: Library) {
        name = issue.name
        date = issue.date.description
        status = issue.status.rawValue
        directory = library.contentURL(for: issue).path
        assets = issue.assets.map { AssetReport($0, library: library) }
        assetsDone = issue.assets.filter(\.isComplete).count
        assetsTotal = issue.assets.count
        bytes = assets.reduce(0) { $0 + $1.receivedBytes }
    }
}

/// The `--json` shape of an asset; `expectedBytes` and `error` are `null` when unknown or absent.
struct AssetReport: Encodable {
    var id: String
    var url: String
    var state: String
    var receivedBytes: Int64
    var expectedBytes: Int64?
    var error: String?
    var sha256: String?
    var unpack: Bool
    var fileName: String?

    init(_ asset: AssetDownload, library: Library) {
        id = asset.id
        url = asset.url.absoluteString
        state = asset.state.rawValue
        // A download in flight (here or in another process) is measured on disk, not in the manifest.
        receivedBytes =
            asset.state == .downloading
            ? (library.bytesOnDisk(assetID: asset.id) ?? asset.receivedBytes) : asset.receivedBytes
        expectedBytes =
            asset.expectedBytes ?? (asset.state == .downloading ? library.expectedBytesOnDisk(assetID: asset.id) : nil)
        error = asset.error
        sha256 = asset.sha256
        unpack = asset.unpack
        fileName = asset.fileName
    }

    private enum CodingKeys: String, CodingKey {
        case id, url, state, receivedBytes, expectedBytes, error, sha256, unpack, fileName
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(url, forKey: .url)
        try c.encode(state, forKey: .state)
        try c.encode(receivedBytes, forKey: .receivedBytes)
        try c.encode(expectedBytes, forKey: .expectedBytes)  // explicit null when unknown
        try c.encode(error, forKey: .error)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(unpack, forKey: .unpack)
        try c.encode(fileName, forKey: .fileName)
    }
}

enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        Terminal.output(String(decoding: data, as: UTF8.self))
    }
}
