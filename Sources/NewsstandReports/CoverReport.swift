import Foundation
import NewsstandCore

/// An issue's cover as `show --json` and the sidecar (`issue.json`) give it: the cover file, its thumbnails
/// by width, where it came from, and why a better source was refused (the placeholder then stands in).
///
/// Files are names inside the folder (`directory`): normally `cover.<ext>` (the source's format when
/// it is JPEG, PNG, WebP or GIF, else `jpg`), `cover-256.jpg` and `cover-1024.jpg`; `issue-cover…` instead
/// when the issue's own content holds one of those names (the content is never overwritten).
public struct CoverReport: Codable, Sendable, Hashable {
    /// Where a cover came from.
    public enum Source: String, Codable, Sendable, Hashable, CaseIterable {
        /// The feed's image of the item (downloaded as an asset with the role `cover`).
        case feed
        /// An EPUB's cover, as its OPF package declares it.
        case epub
        /// The first image (in name order) of a comic book archive.
        case cbz
        /// The first image (in name order) of another ZIP or archive.
        case zip
        /// Page 1 of a PDF, rendered.
        case pdf
        /// An image that is itself the content (a downloaded picture).
        case image
        /// Made from the title and date on a colour of its publication.
        case placeholder
    }

    /// The cover's file name in the folder.
    public var file: String
    /// Thumbnail file names by width in pixels, written as text keys (`"256"`, `"1024"`).
    public var thumbnails: [String: String]
    /// Where the cover came from.
    public var source: Source
    /// Why a source was refused (too many pixels, too large, corrupt), when one was; the next source was used.
    public var refused: String?

    /// Creates a report.
    public init(file: String, thumbnails: [String: String], source: Source, refused: String? = nil) {
        self.file = file
        self.thumbnails = thumbnails
        self.source = source
        self.refused = refused
    }

    /// Every file the cover consists of: the cover, then the thumbnails by width.
    public var files: [String] {
        [file] + thumbnails.sorted { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }.map(\.value)
    }
}
