internal import CVips
import Foundation

/// A contact sheet: many covers' images in one PNG, in rows (what `make demo` writes of its shelf).
public enum ContactSheet {
    /// The images at `paths` (each scaled to `tileWidth` pixels wide, checked as any cover source is), `across`
    /// a row, on a dark grey.
    /// - Returns: The PNG's bytes.
    /// - Throws: ``CoverRefusal`` naming the file that could not be used.
    public static func png(of paths: [String], tileWidth: Int = 256, across: Int = 4) throws -> Data {
        var tiles: [VipsImage] = []
        for path in paths {
            guard let data = try CoverSource.readLimited(path, limit: CoverImage.maxEncodedBytes) else {
                throw CoverRefusal("\(path) is missing")
            }
            do throws(CoverRefusal) {
                let (_, thumbnails) = try CoverImage.thumbnails(of: data, widths: [tileWidth])
                guard let jpeg = thumbnails[tileWidth] else { throw CoverRefusal("no tile") }
                tiles.append(try CoverImage.decode(jpeg, width: tileWidth).inMemory())
            } catch {
                throw CoverRefusal("\(path): \(error.reason)")
            }
        }
        guard !tiles.isEmpty else { throw CoverRefusal("no covers to show") }
        var pointers: [UnsafeMutablePointer<CVips.VipsImage>?] = tiles.map(\.pointer)
        let sheet = try pointers.withUnsafeMutableBufferPointer { (buffer) throws(CoverRefusal) -> VipsImage in
            try VipsImage.make("cannot join the covers") {
                cvips_arrayjoin(buffer.baseAddress, Int32(buffer.count), Int32(max(1, across)), 16, $0)
            }
        }
        return try withExtendedLifetime(tiles) { try sheet.png() }
    }
}
