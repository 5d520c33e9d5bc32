internal import CVips
import Foundation

/// Images drawn by libvips for the tests, the demo's publisher and the bench: a colour with a lighter band,
/// so that a thumbnail shows which way up it is.
package enum SampleImages {
    /// A `width` × `height` JPEG of one colour with a white band across its top fifth.
    package static func jpeg(width: Int, height: Int, red: Double, green: Double, blue: Double) throws -> Data {
        try draw(width: width, height: height, red: red, green: green, blue: blue).jpeg()
    }

    /// The same as a PNG.
    package static func png(width: Int, height: Int, red: Double, green: Double, blue: Double) throws -> Data {
        try draw(width: width, height: height, red: red, green: green, blue: blue).png()
    }

    private static func draw(width: Int, height: Int, red: Double, green: Double, blue: Double) throws(CoverRefusal) -> VipsImage {
        guard Vips.started else { throw CoverRefusal("libvips cannot start") }
        let base = try VipsImage.make("cannot draw") { cvips_solid(Int32(width), Int32(height), red, green, blue, $0) }
        let band = try VipsImage.make("cannot draw") { cvips_solid(Int32(width), Int32(max(1, height / 5)), 255, 255, 255, $0) }
        let mask = try VipsImage.make("cannot draw") {
            cvips_embed(band.pointer, 0, 0, Int32(width), Int32(height), $0)
        }
        return try VipsImage.make("cannot draw") { cvips_blend(mask.pointer, band.pointer, base.pointer, $0) }
    }
}
