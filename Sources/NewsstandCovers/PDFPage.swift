internal import CPoppler
internal import CVips
import Foundation

/// Page 1 of a PDF, rendered in-process by poppler onto a cairo image surface and handed to libvips: no
/// external program (LazyLibrarian's covers through Ghostscript failed as often as not).
enum PDFPage {
    /// The rendered page's width: the largest thumbnail's.
    static let width = 1024
    /// A page taller than 4:1 is cut there: a scroll-like page must not make a 1024 × 100,000 image.
    static let maxHeight = 4096

    /// Page 1 of the PDF at `path`, `width` pixels wide.
    /// - Throws: ``CoverRefusal`` with poppler's words.
    static func render(_ path: String, width: Int = PDFPage.width) throws(CoverRefusal) -> VipsImage {
        guard Vips.started else { throw CoverRefusal("libvips cannot start") }
        var height: Int32 = 0
        var message: UnsafeMutablePointer<CChar>?
        guard let pixels = cpoppler_render_first_page(path, Int32(width), Int32(maxHeight), &height, &message) else {
            let reason = message.map { String(cString: $0) } ?? "poppler cannot read it"
            if let message { cpoppler_free(message) }
            throw CoverRefusal("the PDF's page 1 cannot be rendered: \(reason)")
        }
        // The image takes the pixels (freed when it closes): the page is held once, not copied.
        return try VipsImage.make("cannot hold the rendered page") { cvips_from_bgra(pixels, Int32(width), height, $0) }
    }
}
