// TEMPORARY build aid until the extractor lands; never committed.
public struct UnpackLimits: Sendable, Hashable, Codable {
    public var maxTotalBytes: Int64
    public var maxEntries: Int
    public init(maxTotalBytes: Int64 = 16 << 30, maxEntries: Int = 1_000_000) { self.maxTotalBytes = maxTotalBytes; self.maxEntries = maxEntries }
    public static let `default` = UnpackLimits()
}
public struct ArchiveError: Error, Sendable, CustomStringConvertible {
    public struct Kind: Sendable, Hashable { let raw: Int; static let unsafeEntry = Kind(raw: 0); static let unsupportedEntryType = Kind(raw: 1) }
    public var kind: Kind
    public var description: String { "x" }
}
struct ExtractionSummary {}
struct ArchiveExtractor { var limits: UnpackLimits; static func isArchive(at path: String) -> Bool { false }
  func extract(archiveAt: String, into: String) throws -> ExtractionSummary { ExtractionSummary() } }
func mergeStaging(_ s: String, into d: String) throws {}
