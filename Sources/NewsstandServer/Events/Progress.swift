import Foundation
import Newsstand
import NewsstandCatalog

/// Live progress of every download in flight, by this server or a CLI beside it: the saved list of
/// in-flight downloads (the catalog's pending markers) and each one's bytes on disk. Read a few times a
/// second while an SSE client listens; nothing is kept between reads.
struct ProgressItem: Codable, Sendable, Hashable {
    /// The issue's key (as in URLs).
    var key: String
    var asset: String
    var received: Int64
    var expected: Int64?

    private enum CodingKeys: String, CodingKey { case key, asset, received, expected }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)
        try c.encode(asset, forKey: .asset)
        try c.encode(received, forKey: .received)
        try c.encode(expected, forKey: .expected)  // null while unknown, as AssetReport does
    }
}

extension ServerState {
    /// The downloads in flight now. Blocking.
    func progress() throws -> [ProgressItem] {
        try library.catalog.pendingMarkers().compactMap { marker in
            guard let received = library.bytesOnDisk(assetID: marker.id) else { return nil }
            return ProgressItem(
                key: marker.key, asset: marker.id, received: received,
                expected: library.expectedBytesOnDisk(assetID: marker.id))
        }.sorted { ($0.key, $0.asset) < ($1.key, $1.asset) }
    }

    /// Progress by issue key: bytes received and expected over the issue's assets in flight.
    func progressByIssue() -> [String: (Int64, Int64?)] {
        var result: [String: (Int64, Int64?)] = [:]
        for item in (try? progress()) ?? [] {
            let (received, expected) = result[item.key] ?? (0, 0)
            result[item.key] = (received + item.received, expected.flatMap { a in item.expected.map { a + $0 } })
        }
        return result
    }
}
