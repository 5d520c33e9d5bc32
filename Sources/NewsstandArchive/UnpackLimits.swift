/// Limits that stop archive bombs: an archive that would unpack to more bytes or more entries than this, or that
/// expands too many times its own size, is refused part-way, before the limit is passed.
public struct UnpackLimits: Sendable, Hashable, Codable {
    /// The most bytes of entry data one archive may unpack to (sparse holes count as data). Default 16 GiB.
    public var maxTotalBytes: Int64
    /// The most files, directories and links one archive may create, counting the folders created implicitly for
    /// entries whose parent folders the archive does not list (so that deep paths cannot create folders for
    /// free). Default 1,000,000.
    public var maxEntries: Int
    /// The most times an archive may expand its own size (unpacked bytes over the archive file's bytes), once
    /// past ``expansionRatioFloor``. Default 200: text and PDFs deflate 2 to 20 times, so an archive past 200
    /// is all padding, and a bomb (zeros deflate about 1,000 times) is stopped having written only the floor.
    public var maxExpansionRatio: Int64
    /// The unpacked size below which the expansion ratio is not checked, so that a small, well-compressed
    /// archive (a page of repeated text, a sparse file) always passes. Default 64 MiB.
    public var expansionRatioFloor: Int64

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - maxTotalBytes: The most bytes of entry data one archive may unpack to.
    ///   - maxEntries: The most files, directories and links one archive may create.
    ///   - maxExpansionRatio: The most times an archive may expand its own size past `expansionRatioFloor`.
    ///   - expansionRatioFloor: The unpacked size below which the ratio is not checked.
    public init(
        maxTotalBytes: Int64 = 16 << 30, maxEntries: Int = 1_000_000, maxExpansionRatio: Int64 = 200,
        expansionRatioFloor: Int64 = 64 << 20
    ) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
        self.maxExpansionRatio = maxExpansionRatio
        self.expansionRatioFloor = expansionRatioFloor
    }

    /// 16 GiB, 1,000,000 entries, and 200 times the archive's size past 64 MiB.
    public static let `default` = UnpackLimits()

    private enum CodingKeys: String, CodingKey {
        case maxTotalBytes, maxEntries, maxExpansionRatio, expansionRatioFloor
    }

    /// Decodes limits; the expansion-ratio fields, added later, take their defaults when absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            maxTotalBytes: try container.decode(Int64.self, forKey: .maxTotalBytes),
            maxEntries: try container.decode(Int.self, forKey: .maxEntries),
            maxExpansionRatio: try container.decodeIfPresent(Int64.self, forKey: .maxExpansionRatio) ?? 200,
            expansionRatioFloor: try container.decodeIfPresent(Int64.self, forKey: .expansionRatioFloor) ?? 64 << 20)
    }

    /// The most bytes an archive of `archiveBytes` may unpack to under the ratio (never below the floor),
    /// saturating at `Int64.max`.
    func expansionCap(archiveBytes: Int64) -> Int64 {
        let (product, overflow) = max(archiveBytes, 1).multipliedReportingOverflow(by: max(maxExpansionRatio, 1))
        return max(expansionRatioFloor, overflow ? Int64.max : product)
    }
}
