internal import CVips
import Foundation

/// The process's libvips, started once (``cvips_start``: no cache, untrusted loaders blocked, one thread an
/// image), and the one way a libvips call's failure becomes an error with libvips's own words.
enum Vips {
    /// Whether libvips started; `vips_init` runs once per process (a static's initialiser runs once, under a lock).
    static let started: Bool = cvips_start() == 0

    /// Returns the heap's free memory to the system (after each cover: decoded images are megabytes each).
    static func releaseMemory() { cvips_release_memory() }

    /// libvips's last message (cleared), one line, or `fallback` when it gave none.
    static func lastError(_ fallback: String) -> String {
        let text = cvips_error().map { String(cString: $0) } ?? ""
        cvips_error_clear()
        let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        return line.isEmpty ? fallback : line
    }
}

/// One `VipsImage *`, released with the object (not `Sendable`: used inside one call).
final class VipsImage {
    let pointer: UnsafeMutablePointer<CVips.VipsImage>

    init(_ pointer: UnsafeMutablePointer<CVips.VipsImage>) { self.pointer = pointer }

    /// Takes the image a wrapper wrote into `out`, or throws libvips's words when it returned non-zero.
    static func make(
        _ what: String, _ call: (UnsafeMutablePointer<UnsafeMutablePointer<CVips.VipsImage>?>) -> Int32
    ) throws(CoverRefusal) -> VipsImage {
        var out: UnsafeMutablePointer<CVips.VipsImage>?
        let status = call(&out)
        guard status == 0, let out else {
            if let out { cvips_unref(out) }
            throw CoverRefusal("\(what): \(Vips.lastError("libvips failed"))")
        }
        return VipsImage(out)
    }

    deinit { cvips_unref(pointer) }

    var width: Int { Int(pointer.pointee.Xsize) }
    var height: Int { Int(pointer.pointee.Ysize) }

    /// The image as JPEG (quality 85, no metadata).
    func jpeg() throws(CoverRefusal) -> Data {
        try encode("cannot encode JPEG") { cvips_jpeg(pointer, $0, $1) }
    }

    /// The image as PNG.
    func png() throws(CoverRefusal) -> Data {
        try encode("cannot encode PNG") { cvips_png(pointer, $0, $1) }
    }

    private func encode(
        _ what: String,
        _ call: (UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>) -> Int32
    ) throws(CoverRefusal) -> Data {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        // Decoding happens here (libvips is lazy): a truncated or corrupt source fails now.
        guard call(&buffer, &length) == 0, let buffer else {
            throw CoverRefusal("\(what): \(Vips.lastError("libvips failed"))")
        }
        defer { cvips_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// The image computed into memory (decoding it now: a damaged source fails here).
    func inMemory() throws(CoverRefusal) -> VipsImage {
        guard let copy = cvips_copy_memory(pointer) else {
            throw CoverRefusal("cannot decode the image: \(Vips.lastError("libvips failed"))")
        }
        return VipsImage(copy)
    }

    /// The image scaled to `width` pixels wide (never enlarged).
    func thumbnail(width: Int) throws(CoverRefusal) -> VipsImage {
        try VipsImage.make("cannot resize") { cvips_thumbnail_image(pointer, Int32(width), $0) }
    }
}

/// Why an image was not used for a cover: one line, shown by `show` as the cover's `refused`.
public struct CoverRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
