internal import CVips
import Foundation

/// The one entry point for image bytes from outside (a feed's picture, an EPUB's or archive's image): the
/// limits are checked before any pixel is decoded, then libvips decodes, resizes and encodes. The fuzz target
/// `Fuzz/CoverImage` calls ``thumbnails(of:widths:)``, as the cover maker does.
package enum CoverImage {
    /// The most pixels a source may declare (100 megapixels): a decompression bomb declares far more than
    /// its bytes (a 30,000 × 30,000 PNG of zeros is a few hundred kilobytes).
    package static let maxPixels = 100_000_000
    /// The most encoded bytes a source image may have (16 MiB).
    package static let maxEncodedBytes = 16 << 20

    /// What a source image is, read from its header alone.
    package struct Header: Sendable, Hashable {
        /// The extension its format keeps as a cover (`jpg`, `png`, `webp`, `gif`), or nil when the cover is
        /// re-encoded as JPEG (another format libvips reads: TIFF, HEIF, SVG…).
        package var keptExtension: String?
        package var width: Int
        package var height: Int
    }

    /// Checks `data` against the limits from its header: its size, a format libvips reads (and trusts), the
    /// declared dimensions.
    /// - Throws: ``CoverRefusal`` naming the limit or libvips's words.
    package static func header(of data: Data) throws(CoverRefusal) -> Header {
        guard Vips.started else { throw CoverRefusal("libvips cannot start: \(Vips.lastError("vips_init failed"))") }
        guard data.count <= maxEncodedBytes else {
            throw CoverRefusal("the image has \(data.count) bytes, more than the 16 MiB limit")
        }
        guard !data.isEmpty else { throw CoverRefusal("the image is empty") }
        let result: Result<Header, CoverRefusal> = data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, let loader = cvips_loader(base, bytes.count) else {
                cvips_error_clear()
                return .failure(CoverRefusal("not an image format libvips reads"))
            }
            let name = String(cString: loader)
            guard let header = cvips_header(base, bytes.count) else {
                return .failure(CoverRefusal("the image's header is damaged: \(Vips.lastError("unreadable"))"))
            }
            defer { cvips_unref(header) }
            let width = Int(header.pointee.Xsize)
            let height = Int(header.pointee.Ysize)
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            guard width > 0, height > 0 else { return .failure(CoverRefusal("the image declares no pixels")) }
            guard !overflow, pixels <= maxPixels else {
                return .failure(CoverRefusal(
                    "the image declares \(width) × \(height) pixels, more than the 100-megapixel limit"))
            }
            return .success(Header(keptExtension: keptExtension(loader: name), width: width, height: height))
        }
        return try result.get()
    }

    /// `data` decoded to `width` pixels wide (lazily: pixels are computed when asked for).
    static func decode(_ data: Data, width: Int) throws(CoverRefusal) -> VipsImage {
        // `withUnsafeBytes` rethrows untyped: the typed error travels in a Result.
        let result: Result<VipsImage, CoverRefusal> = data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return .failure(CoverRefusal("the image is empty")) }
            return Result { () throws(CoverRefusal) in
                try VipsImage.make("cannot decode the image") { cvips_thumbnail(base, bytes.count, Int32(width), $0) }
            }
        }
        return try result.get()
    }

    /// The extension of a format a cover keeps as it is (the bytes are copied, not re-encoded), from the
    /// loader's type name (`VipsForeignLoadJpegBuffer`, `VipsForeignLoadPngBuffer`, `…NsgifBuffer`); nil for
    /// the others, which become JPEG.
    static func keptExtension(loader: String) -> String? {
        let name = loader.lowercased()
        for (format, ext) in [("jpeg", "jpg"), ("png", "png"), ("webp", "webp"), ("gif", "gif")] where name.contains(format) {
            return ext
        }
        return nil
    }

    /// JPEG thumbnails of `data`, one per width (never wider than the source), after ``header(of:)``'s checks;
    /// decoding fails on any error, so a truncated or corrupt image is refused rather than half-drawn.
    /// - Returns: The header and each width's JPEG bytes.
    /// - Throws: ``CoverRefusal``.
    package static func thumbnails(of data: Data, widths: [Int]) throws(CoverRefusal) -> (Header, [Int: Data]) {
        let header = try header(of: data)
        // Each width is decoded from the source on its own, streamed from the decoder through the resize into
        // the encoder: no decoded image is held whole. Shrink-on-load (JPEG's DCT scaling, WebP's) makes the
        // narrow ones cheap; the 1600 × 2100 JPEG of the covers bench, for one, is decoded at 400 × 525 for 256.
        // Holding the widest in memory to scale the others from it kept 1024 × 1344 × 3 bytes (4 MiB) for
        // each cover, and libjpeg's whole-image coefficients for the encode beside them.
        var result: [Int: Data] = [:]
        for width in Set(widths).sorted(by: >) {
            result[width] = try decode(data, width: width).jpeg()
        }
        return (header, result)
    }
}
