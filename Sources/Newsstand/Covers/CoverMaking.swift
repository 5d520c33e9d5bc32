import Foundation
import NewsstandCore

/// What makes covers: decoding and resizing images and rendering PDF pages. The `Newsstand` product holds
/// no image library (a dependent builds without libvips or poppler); the `NewsstandCovers` target
/// implements this (`CoverMaker`), and a program that wants covers sets one in ``Library/Configuration``.
public protocol CoverMaking: Sendable {
    /// Makes the cover of one issue from the first candidate that yields one (else a placeholder) and places
    /// its files in ``CoverRequest/directory`` under ``CoverRequest/names``, each by writing a temporary
    /// file beside it and renaming it, so that a kill never leaves a torn image.
    ///
    /// Blocks on image work; call it off the cooperative pool's hot paths (the library does).
    /// - Returns: What was made, with the reason any candidate was refused.
    /// - Throws: When the files cannot be written (disk full, permissions); a bad image is not an error.
    func makeCover(_ request: CoverRequest) throws -> CoverReport

    /// What is wrong with a cover file the library placed (unreadable, not an image, damaged), or nil when it
    /// is sound: `verify`'s check. Blocking.
    func problem(withCoverAt path: String) -> String?
}

/// What a cover is made from, best first.
public enum CoverCandidate: Sendable, Hashable, Codable {
    /// An image file: the feed's image of the item (`.feed`), or the first image of an unpacked comic book
    /// or ZIP archive (`.cbz`, `.zip`).
    case image(path: String, source: CoverReport.Source)
    /// An unpacked EPUB: the folder that holds its `META-INF/container.xml`.
    case epubFolder(String)
    /// An archive kept whole (an EPUB, CBZ or ZIP not unpacked).
    case archive(path: String)
    /// A PDF: page 1 is rendered.
    case pdf(path: String)
}

/// The file names a cover takes in an issue's folder.
public struct CoverNames: Sendable, Hashable, Codable {
    /// The cover's name without its extension (`cover`).
    public var base: String
    /// The widths of the thumbnails, in pixels.
    public var widths: [Int]

    /// The agreed names: `cover.<ext>`, `cover-256.jpg`, `cover-1024.jpg` (the library's folder layout,
    /// `LibraryLayout.issueFiles`, lists them too).
    public static let standard = CoverNames(base: "cover")
    /// The names used when the issue's content holds one of the standard names: `issue-cover…`.
    public static let clashing = CoverNames(base: "issue-cover")

    public init(base: String, widths: [Int] = [256, 1024]) {
        self.base = base
        self.widths = widths
    }

    /// The cover's name for an extension (`jpg`, `png`, `webp`, `gif`).
    public func cover(_ ext: String) -> String { "\(base).\(ext)" }
    /// A thumbnail's name.
    public func thumbnail(_ width: Int) -> String { "\(base)-\(width).jpg" }
    /// Every name these may take.
    public var all: [String] { LibraryLayout.coverFiles(base: base, widths: widths) }
}

/// One issue's cover to make. Codable, so that a maker can hand it to another process (the `issues` command
/// makes covers in a worker process of its own).
public struct CoverRequest: Sendable, Hashable, Codable {
    public var issueName: String
    /// The issue's title as a placeholder shows it (the feed item's title when there is one).
    public var title: String
    public var date: IssueDate
    /// The publication, whose name chooses the placeholder's colour.
    public var publication: String
    /// The issue's content folder (absolute).
    public var directory: String
    /// The sources to try, best first; the placeholder comes after them.
    public var candidates: [CoverCandidate]
    /// Where the files go.
    public var names: CoverNames

    public init(
        issueName: String, title: String, date: IssueDate, publication: String, directory: String,
        candidates: [CoverCandidate], names: CoverNames = .standard
    ) {
        self.issueName = issueName
        self.title = title
        self.date = date
        self.publication = publication
        self.directory = directory
        self.candidates = candidates
        self.names = names
    }
}
