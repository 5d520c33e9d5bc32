/// What one extraction produced.
package struct ExtractionSummary: Sendable, Hashable {
    /// Entries read from the archive (files, directories and links, including a skipped `./` root entry).
    var entries: Int
    /// Bytes of entry data written.
    var bytes: Int64
    /// libarchive's warnings (`ARCHIVE_WARN`), each naming its entry, plus notes from the extractor.
    var warnings: [String]
    /// What was created, in archive order (entries whose path is not UTF-8 are left out): what the
    /// library records for `verify` once the content is placed.
    package var placed: [PlacedEntry] = []
    /// How many workers unpacked the archive at once (see ``ExtractionPlan``).
    var workers = 1
}

/// One object an extraction created, relative to the staging folder.
package struct PlacedEntry: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case file, directory, link
    }
    package var path: String
    package var kind: Kind
    /// A regular file's size; nil for folders, links, and hard links (whose size is their target's).
    package var size: Int64?

    package init(path: String, kind: Kind, size: Int64?) {
        self.path = path
        self.kind = kind
        self.size = size
    }
}
