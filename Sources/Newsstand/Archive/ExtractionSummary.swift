/// What one extraction produced.
struct ExtractionSummary: Sendable, Hashable {
    /// Entries read from the archive (files, directories and links, including a skipped `./` root entry).
    var entries: Int
    /// Bytes of entry data written.
    var bytes: Int64
    /// libarchive's warnings (`ARCHIVE_WARN`), each naming its entry, plus notes from the extractor.
    var warnings: [String]
}
