import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandArchive
@testable import NewsstandCore
@testable import NewsstandCovers

/// Covers from each source, written by the tests themselves (images through libvips, a PDF and a PNG bomb by
/// hand, EPUB and CBZ through the archive fixtures); the limits refuse with a reason and the placeholder stands in.
@Suite(.timeLimit(.minutes(5))) struct CoverTests {
    /// Makes the cover of `candidates` in `folder`.
    func make(_ candidates: [CoverCandidate], in folder: URL, title: String = "Issue 1") throws -> CoverReport {
        try CoverMaker().makeCover(
            CoverRequest(
                issueName: title, title: title, date: IssueDate("2026-11-20") ?? IssueDate(Date()), publication: "The Daily",
                directory: folder.path, candidates: candidates))
    }

    /// The width and height of an image file, read by libvips.
    func size(_ url: URL) throws -> (Int, Int) {
        let header = try CoverImage.header(of: try Data(contentsOf: url))
        return (header.width, header.height)
    }

    /// Every file the cover names exists and decodes; the thumbnails have their widths (or the source's, when narrower).
    func expectSound(_ cover: CoverReport, in folder: URL, sourceWidth: Int) throws {
        #expect(Set(cover.thumbnails.keys) == ["256", "1024"])
        for file in cover.files {
            #expect(CoverMaker().problem(withCoverAt: folder.appendingPathComponent(file).path) == nil, "\(file)")
        }
        for (width, file) in cover.thumbnails {
            let (w, _) = try size(folder.appendingPathComponent(file))
            #expect(w == min(Int(width) ?? 0, sourceWidth), "\(file)")
        }
    }

    @Test func aFeedImageIsKeptInItsFormatWithThumbnails() throws {
        try withTemporaryDirectorySync { folder in
            let png = try SampleImages.png(width: 1200, height: 1600, red: 20, green: 90, blue: 160)
            let source = folder.appendingPathComponent("art.png")
            try png.write(to: source)
            let cover = try make([.image(path: source.path, source: .feed)], in: folder)
            #expect(cover.source == .feed && cover.file == "cover.png" && cover.refused == nil)
            #expect(try Data(contentsOf: folder.appendingPathComponent("cover.png")) == png)
            try expectSound(cover, in: folder, sourceWidth: 1200)
        }
    }

    @Test func anUnpackedEPUBGivesTheCoverItsPackageDeclares() throws {
        try withTemporaryDirectorySync { folder in
            let png = try SampleImages.png(width: 600, height: 900, red: 200, green: 120, blue: 0)
            for (path, data) in CoverFixtures.epubEntries(cover: png) {
                let url = folder.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: url)
            }
            // An image that sorts before the cover is not taken: the package says which one is the cover.
            try SampleImages.jpeg(width: 100, height: 100, red: 0, green: 0, blue: 0)
                .write(to: folder.appendingPathComponent("OEBPS/images/aaa.jpg"))
            let cover = try make([.epubFolder(folder.path)], in: folder)
            #expect(cover.source == .epub && cover.file == "cover.png")
            try expectSound(cover, in: folder, sourceWidth: 600)
        }
    }

    @Test func anEPUBKeptWholeAndACBZGiveTheirCovers() throws {
        try withTemporaryDirectorySync { folder in
            let png = try SampleImages.png(width: 500, height: 700, red: 10, green: 150, blue: 10)
            let epub = folder.appendingPathComponent("book.epub").path
            try ArchiveFixtures.write(
                CoverFixtures.epubEntries(cover: png).map { .file($0.0, Array($0.1)) }, format: .zip, to: epub)
            let cover = try make([.archive(path: epub)], in: folder)
            #expect(cover.source == .epub && cover.file == "cover.png")
            try expectSound(cover, in: folder, sourceWidth: 500)

            // Pages in name order, numbers by value: 2.jpg comes before 10.jpg (which is not even an image).
            let page = try SampleImages.jpeg(width: 800, height: 1200, red: 90, green: 0, blue: 90)
            let cbz = folder.appendingPathComponent("comic.cbz").path
            try ArchiveFixtures.write(
                [.file("pages/10.jpg", Array("not an image".utf8)), .file("pages/2.jpg", Array(page)),
                 .file("__MACOSX/pages/._1.jpg", [0, 1])],
                format: .zip, to: cbz)
            let comic = try make([.archive(path: cbz)], in: folder)
            #expect(comic.source == .cbz && comic.file == "cover.jpg")
            #expect(try Data(contentsOf: folder.appendingPathComponent("cover.jpg")) == page)
            try expectSound(comic, in: folder, sourceWidth: 800)
        }
    }

    @Test func page1OfAPDFIsRenderedInProcess() throws {
        try withTemporaryDirectorySync { folder in
            let pdf = folder.appendingPathComponent("issue.pdf")
            try CoverFixtures.pdf().write(to: pdf)
            let cover = try make([.pdf(path: pdf.path)], in: folder)
            #expect(cover.source == .pdf && cover.file == "cover.jpg" && cover.refused == nil)
            let (width, height) = try size(folder.appendingPathComponent("cover.jpg"))
            #expect(width == 1024 && height == 1325)  // US letter's proportions
            try expectSound(cover, in: folder, sourceWidth: 1024)
        }
    }

    @Test func withoutASourceThePlaceholderIsDrawn() throws {
        try withTemporaryDirectorySync { folder in
            let cover = try make([], in: folder, title: "Ünïcode & <markup> 'title'")
            #expect(cover.source == .placeholder && cover.file == "cover.jpg" && cover.refused == nil)
            #expect(try size(folder.appendingPathComponent("cover.jpg")) == (1024, 1365))
            try expectSound(cover, in: folder, sourceWidth: 1024)
            // The same publication, the same colour.
            #expect(Placeholder.colour(of: "The Daily") == Placeholder.colour(of: "The Daily"))
            #expect(Placeholder.colour(of: "The Daily") != Placeholder.colour(of: "The Weekly"))
        }
    }

    @Test func aPixelBombIsRefusedBeforeDecodingAndThePlaceholderUsed() throws {
        try withTemporaryDirectorySync { folder in
            let bomb = CoverFixtures.pngBomb()
            #expect(bomb.count < 1 << 20)  // 900 megapixels in under a megabyte
            let path = folder.appendingPathComponent("bomb.png")
            try bomb.write(to: path)
            let cover = try make([.image(path: path.path, source: .feed)], in: folder)
            #expect(cover.source == .placeholder)
            #expect(cover.refused?.contains("30000 × 30000") == true, "\(cover.refused ?? "")")
            #expect(cover.refused?.contains("100-megapixel") == true)
            try expectSound(cover, in: folder, sourceWidth: 1024)
        }
    }

    @Test func aTruncatedJPEGIsRefusedAndTheNextSourceUsed() throws {
        try withTemporaryDirectorySync { folder in
            let jpeg = try SampleImages.jpeg(width: 1600, height: 1200, red: 30, green: 60, blue: 200)
            let path = folder.appendingPathComponent("cut.jpg")
            try jpeg.prefix(jpeg.count / 2).write(to: path)
            let pdf = folder.appendingPathComponent("issue.pdf")
            try CoverFixtures.pdf().write(to: pdf)
            let cover = try make([.image(path: path.path, source: .feed), .pdf(path: pdf.path)], in: folder)
            #expect(cover.source == .pdf)
            #expect(cover.refused?.hasPrefix("the feed's image: ") == true, "\(cover.refused ?? "")")
            // Alone, it gives the placeholder, with the reason.
            let alone = try make([.image(path: path.path, source: .feed)], in: folder)
            #expect(alone.source == .placeholder && alone.refused != nil)
        }
    }

    @Test func tooLargeAndNotAnImageAreRefused() throws {
        try withTemporaryDirectorySync { folder in
            let big = folder.appendingPathComponent("big.jpg")
            try Data(count: CoverImage.maxEncodedBytes + 1).write(to: big)
            let text = folder.appendingPathComponent("page.png")
            try Data("<html>no</html>".utf8).write(to: text)
            let cover = try make([.image(path: big.path, source: .feed), .image(path: text.path, source: .zip)], in: folder)
            #expect(cover.source == .placeholder)
            #expect(cover.refused?.contains("16 MiB") == true, "\(cover.refused ?? "")")
            #expect(throws: CoverRefusal.self) { try CoverImage.header(of: Data("<html>no</html>".utf8)) }
        }
    }
}
