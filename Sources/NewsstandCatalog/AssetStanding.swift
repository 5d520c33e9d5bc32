import NewsstandCore

/// Where one asset of an issue stands, read from the catalog without decoding its issue's other assets:
/// what a download reads as it starts each asset, to find out whether another process finished or
/// removed it since the run chose it.
package struct AssetStanding: Sendable {
    package var asset: AssetDownload
    package var isBeingRemoved: Bool
    /// The issue came from a subscription (an expired link can be asked of its feed again).
    package var hasOrigin: Bool
}

extension IssueRecord {
    /// Reads the asset with `id` of the record of the issue named `name`, and the issue's removal flag and
    /// origin, stepping over its other assets: decoding a whole 200-asset record for each of its assets as
    /// a run started it took a quarter of the run's CPU (200 × 5 MiB, `--jobs 8`).
    /// - Returns: nil when the record is another issue's or lists no asset with `id`.
    /// - Throws: `.manifestUnreadable` or `.manifestFromNewerVersion` naming `path`. The rest of the record
    ///   is checked for syntax only; the commit that follows decodes all of it.
    package static func decodeAsset(
        _ id: String, ofIssueNamed name: String, in bytes: UnsafeBufferPointer<UInt8>, path: String
    ) throws -> AssetStanding? {
        var assetStart: (offset: Int, index: Int)?
        var recordName: String?
        var removing = false
        var hasOrigin = false
        do {
            var reader = JSONReader(bytes: bytes)
            try reader.expect(UInt8(ascii: "{"))
            var first = true
            while let key = try reader.nextKey(first: first) {
                first = false
                switch key {
                case "assets": assetStart = try findAsset(id, reader: &reader, bytes: bytes)
                case "name": recordName = try reader.readString()
                case "removing":
                    switch try reader.readValue() {
                    case .null: break
                    case .bool(let value): removing = value
                    default: throw CatalogShapeError("issue.removing is not a boolean")
                    }
                case "origin": hasOrigin = try reader.readValue() != .null
                case "version":
                    if case .integer(let version) = try reader.readValue(), version > Self.newestVersion {
                        throw NewsstandError(
                            .manifestFromNewerVersion,
                            "\(path) has version \(version), newer than this issues understands (\(Self.newestVersion)); it was left untouched"
                        )
                    }
                default: try reader.skipValue()
                }
            }
            // Decoded only now, after the whole record: a newer version's asset of a shape this version
            // cannot read is reported as from a newer version, as the whole decode reports it.
            guard recordName == name, let assetStart else { return nil }
            var again = JSONReader(bytes: bytes, offset: assetStart.offset)
            let asset = try AssetDownload(json: try again.readValue(), at: "issue.assets[\(assetStart.index)]")
            return AssetStanding(asset: asset, isBeingRemoved: removing, hasOrigin: hasOrigin)
        } catch let error as NewsstandError {
            throw error
        } catch {
            throw unreadable(path, error)
        }
    }

    /// Steps over the `assets` array, finding the element whose `id` is `id`.
    /// - Returns: Where that element starts, and its index; nil when there is none.
    private static func findAsset(
        _ id: String, reader: inout JSONReader, bytes: UnsafeBufferPointer<UInt8>
    ) throws -> (offset: Int, index: Int)? {
        try reader.expect(UInt8(ascii: "["))
        if reader.peek() == UInt8(ascii: "]") {
            try reader.expect(UInt8(ascii: "]"))
            return nil
        }
        var found: (offset: Int, index: Int)?
        var index = 0
        while true {
            _ = reader.peek()  // to the element's first byte
            let start = reader.i
            if try elementID(&reader) == id {
                // A record that lists an asset twice is refused, as the whole decode refuses it.
                guard found == nil else { throw CatalogShapeError("issue lists asset \(id) twice") }
                found = (start, index)
            }
            index += 1
            if reader.peek() == UInt8(ascii: ",") {
                try reader.expect(UInt8(ascii: ","))
            } else {
                try reader.expect(UInt8(ascii: "]"))
                return found
            }
        }
    }

    /// Steps over one element of `assets` and returns its `id`, if it is an object that has a string one.
    private static func elementID(_ reader: inout JSONReader) throws -> String? {
        guard reader.peek() == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        try reader.expect(UInt8(ascii: "{"))
        var id: String?
        var first = true
        while let key = try reader.nextKey(first: first) {
            first = false
            if key == "id", reader.peek() == UInt8(ascii: "\"") {
                id = try reader.readString()
            } else {
                try reader.skipValue()
            }
        }
        return id
    }
}
