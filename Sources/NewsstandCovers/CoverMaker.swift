internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation
import Newsstand
import NewsstandArchive
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Makes covers with libvips and poppler: the ``CoverMaking`` the `issues` command installs in its library's
/// configuration. Sources in the request's order; the first that yields an image wins; a source that is too
/// large, a bomb or corrupt is refused with its reason kept, and the next one tried; the placeholder last.
public struct CoverMaker: CoverMaking {
    public init() {}

    /// Makes and places one issue's cover (see ``CoverMaking/makeCover(_:)``), on the covers' thread
    /// (``CoverThread``). Blocking.
    public func makeCover(_ request: CoverRequest) throws -> CoverReport {
        try CoverThread.shared.run { try CoverMaker.make(request) }
    }

    private static func make(_ request: CoverRequest) throws -> CoverReport {
        defer { Vips.releaseMemory() }
        var refusals: [String] = []
        for candidate in request.candidates {
            let made: MadeCover?
            do {
                made = try CoverSource.image(from: candidate, widths: request.names.widths)
            } catch {
                refusals.append("\(CoverSource.label(candidate)): \(error.reason)")
                continue
            }
            // A source with nothing to give (an EPUB that declares no cover) is passed over without a reason.
            guard let made else { continue }
            return try CoverFiles.place(made, names: request.names, in: request.directory, refused: refusals.first)
        }
        let made = try CoverSource.placeholder(request)
        return try CoverFiles.place(made, names: request.names, in: request.directory, refused: refusals.first)
    }

    /// Decodes the whole file (a small thumbnail of it): a truncated image has a sound header but fails here.
    public func problem(withCoverAt path: String) -> String? {
        (try? CoverThread.shared.run { CoverMaker.check(path) }) ?? nil
    }

    private static func check(_ path: String) -> String? {
        do {
            guard let data = try CoverSource.readLimited(path, limit: CoverImage.maxEncodedBytes) else {
                return "\((path as NSString).lastPathComponent) is missing"
            }
            _ = try CoverImage.thumbnails(of: data, widths: [64])
            return nil
        } catch let refusal as CoverRefusal {
            return "\((path as NSString).lastPathComponent): \(refusal.reason)"
        } catch {
            return "\((path as NSString).lastPathComponent): \(error)"
        }
    }
}

/// A cover ready to place: the cover file's bytes and extension, each thumbnail's JPEG, where it came from.
struct MadeCover {
    var source: CoverReport.Source
    var coverExtension: String
    var cover: Data
    var thumbnails: [Int: Data]
}

/// Puts a made cover's files in the folder, each written beside its name and renamed onto it, the
/// thumbnails before the cover; the folder is flushed once at the end.
enum CoverFiles {
    static func place(_ made: MadeCover, names: CoverNames, in folder: String, refused: String?) throws -> CoverReport {
        var thumbnails: [String: String] = [:]
        for (width, data) in made.thumbnails.sorted(by: { $0.key < $1.key }) {
            let name = names.thumbnail(width)
            try AtomicFile.write(data, to: "\(folder)/\(name)", flushingFolder: false)
            thumbnails[String(width)] = name
            // The kill tests stop here, with one file placed and the others not: no name may hold a torn image.
            CrashPoint.reached("cover-placing")
        }
        let file = names.cover(made.coverExtension)
        try AtomicFile.write(made.cover, to: "\(folder)/\(file)", flushingFolder: false)
        try POSIX.fsyncDirectory(folder)
        return CoverReport(file: file, thumbnails: thumbnails, source: made.source, refused: refused)
    }
}

/// Each kind of source turned into a ``MadeCover``.
enum CoverSource {
    /// A short name of a candidate, for a refusal's reason.
    static func label(_ candidate: CoverCandidate) -> String {
        switch candidate {
        case .image(_, .feed): return "the feed's image"
        case .image(let path, _): return (path as NSString).lastPathComponent
        case .epubFolder: return "the EPUB's cover"
        case .archive(let path): return (path as NSString).lastPathComponent
        case .pdf(let path): return (path as NSString).lastPathComponent
        }
    }

    /// The cover from `candidate`, or nil when it has no image to give (an EPUB that declares no cover).
    static func image(from candidate: CoverCandidate, widths: [Int]) throws(CoverRefusal) -> MadeCover? {
        // The tests kill the cover worker here, as a decoder crashing on a hostile image would.
        CrashPoint.reached("cover-decoding")
        switch candidate {
        case .image(let path, let source):
            return try encoded(try readImage(path), source: source, widths: widths)
        case .epubFolder(let root):
            guard let container = try? readLimited("\(root)/META-INF/container.xml", limit: 1 << 20),
                let package = EPUBCover.packagePath(container: container),
                let opf = try? readLimited("\(root)/\(package)", limit: 4 << 20),
                let cover = EPUBCover.coverPath(package: opf, packagePath: package)
            else { return nil }
            return try encoded(try readImage("\(root)/\(cover)"), source: .epub, widths: widths)
        case .archive(let path):
            return try fromArchive(path, widths: widths)
        case .pdf(let path):
            let page = try PDFPage.render(path)
            // The page is already in memory (the pixels poppler drew): each output reads them, none copies.
            return try rendered(page, source: .pdf, widths: widths, hold: false)
        }
    }

    /// The placeholder, drawn.
    static func placeholder(_ request: CoverRequest) throws -> MadeCover {
        let image = try Placeholder.image(title: request.title, date: request.date.description, publication: request.publication)
        return try rendered(image, source: .placeholder, widths: request.names.widths)
    }

    /// An image from an archive kept whole: an EPUB's declared cover, else the first image in name order.
    private static func fromArchive(_ path: String, widths: [Int]) throws(CoverRefusal) -> MadeCover? {
        let ext = (path as NSString).pathExtension.lowercased()
        do {
            let paths = try ArchiveEntryFile.paths(in: path)
            if paths.contains("META-INF/container.xml") {
                guard let container = try ArchiveEntryFile.read("META-INF/container.xml", in: path, maxBytes: 1 << 20),
                    let package = EPUBCover.packagePath(container: container),
                    let opf = try ArchiveEntryFile.read(package, in: path, maxBytes: 4 << 20),
                    let cover = EPUBCover.coverPath(package: opf, packagePath: package),
                    let data = try ArchiveEntryFile.read(cover, in: path, maxBytes: CoverImage.maxEncodedBytes)
                else { return nil }
                return try encoded(data, source: .epub, widths: widths)
            }
            let images = paths.filter {
                ["jpg", "jpeg", "png", "webp", "gif"].contains(($0 as NSString).pathExtension.lowercased())
                    && !$0.split(separator: "/").contains { $0.hasPrefix(".") || $0 == "__MACOSX" }
            }
            guard let first = images.min(by: { $0.compare($1, options: [.numeric, .caseInsensitive]) == .orderedAscending }),
                let data = try ArchiveEntryFile.read(first, in: path, maxBytes: CoverImage.maxEncodedBytes)
            else { return nil }
            return try encoded(data, source: ext == "cbz" ? .cbz : .zip, widths: widths)
        } catch let refusal as CoverRefusal {
            throw refusal
        } catch let tooLarge as ArchiveEntryFile.TooLarge {
            throw CoverRefusal("\(tooLarge.entryPath) has more than 16 MiB, the limit of an image")
        } catch {
            throw CoverRefusal("the archive cannot be read: \(error)")
        }
    }

    /// A source image's thumbnails; the cover keeps the source's bytes when its format is kept, else the
    /// widest thumbnail.
    private static func encoded(_ data: Data, source: CoverReport.Source, widths: [Int]) throws(CoverRefusal) -> MadeCover {
        let (header, thumbnails) = try CoverImage.thumbnails(of: data, widths: widths)
        if let ext = header.keptExtension {
            return MadeCover(source: source, coverExtension: ext, cover: data, thumbnails: thumbnails)
        }
        guard let widest = widths.max(), let cover = thumbnails[widest] else { throw CoverRefusal("no thumbnail width") }
        return MadeCover(source: source, coverExtension: "jpg", cover: cover, thumbnails: thumbnails)
    }

    /// A drawn image (a PDF page, the placeholder): the cover is its JPEG, the thumbnails scaled from it.
    /// - Parameter hold: Computes the image into memory first, for a drawing that is costly to compute twice (the
    ///   placeholder's text); a page poppler drew is in memory already.
    private static func rendered(
        _ image: VipsImage, source: CoverReport.Source, widths: [Int], hold: Bool = true
    ) throws(CoverRefusal) -> MadeCover {
        let held = hold ? try image.inMemory() : image
        let cover = try held.jpeg()
        var thumbnails: [Int: Data] = [:]
        for width in widths {
            thumbnails[width] = width >= held.width ? cover : try held.thumbnail(width: width).jpeg()
        }
        return MadeCover(source: source, coverExtension: "jpg", cover: cover, thumbnails: thumbnails)
    }

    /// A source image file, refused unread when larger than the limit (and never through a symbolic link).
    private static func readImage(_ path: String) throws(CoverRefusal) -> Data {
        do {
            guard let data = try readLimited(path, limit: CoverImage.maxEncodedBytes) else {
                throw CoverRefusal("\((path as NSString).lastPathComponent) is missing")
            }
            return data
        } catch let refusal as CoverRefusal {
            throw refusal
        } catch {
            throw CoverRefusal("\((path as NSString).lastPathComponent) cannot be read: \(error)")
        }
    }

    /// The file's bytes, nil when it does not exist; refused when over `limit` bytes (checked before reading).
    static func readLimited(_ path: String, limit: Int) throws -> Data? {
        // Never through a link (content could point one anywhere); a FIFO does not block the open.
        guard let fd = try POSIX.openIfExists(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) else { return nil }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw CoverRefusal("\((path as NSString).lastPathComponent) is not a plain file")
        }
        guard info.st_size <= limit else {
            throw CoverRefusal("\((path as NSString).lastPathComponent) has \(info.st_size) bytes, more than the 16 MiB limit")
        }
        var data = Data(count: Int(info.st_size))
        let count = data.withUnsafeMutableBytes { POSIX.readFully(fd, into: $0, at: 0) }
        guard count >= 0 else { throw CoverRefusal("\((path as NSString).lastPathComponent) cannot be read") }
        if count < data.count { data.removeSubrange(count...) }
        return data
    }
}
