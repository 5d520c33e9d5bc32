/// Limits that stop archive bombs: an archive that would unpack to more bytes or more entries than this is refused
/// part-way, before the limit is passed.
public struct UnpackLimits: Sendable, Hashable, Codable {
    /// The most bytes of entry data one archive may unpack to (sparse holes count as data). Default 16 GiB.
    public var maxTotalBytes: Int64
    /// The most files, directories and links one archive may create, counting the folders created implicitly for
    /// entries whose parent folders the archive does not list (so that deep paths cannot create folders for
    /// free). Default 1,000,000.
    public var maxEntries: Int

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - maxTotalBytes: The most bytes of entry data one archive may unpack to.
    ///   - maxEntries: The most files, directories and links one archive may create.
    public init(maxTotalBytes: Int64 = 16 << 30, maxEntries: Int = 1_000_000) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
    }

    /// 16 GiB and 1,000,000 entries.
    public static let `default` = UnpackLimits()
}
