// libFuzzer target for the covers' entry points for outside bytes: `CoverImage.thumbnails` (the limits from
// the header, then libvips's decode, resize and JPEG encode, failing on any error) and the EPUB reading
// (`container.xml` and the OPF package). Beyond "no crash, no memory error": a refusal always has a reason;
// an accepted image keeps the limits and gives a JPEG no wider than asked.
import FuzzSupport
import Foundation
import NewsstandCovers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCoverImage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = Data(UnsafeBufferPointer(start: data, count: size))
    do {
        let (header, thumbnails) = try CoverImage.thumbnails(of: body, widths: [32, 64])
        guard header.width * header.height <= CoverImage.maxPixels, thumbnails.count == 2 else {
            fatalError("an accepted image broke a limit: \(header)")
        }
        for jpeg in thumbnails.values where !(jpeg.starts(with: [0xFF, 0xD8])) {
            fatalError("a thumbnail is not a JPEG")
        }
    } catch {
        guard !error.reason.isEmpty else { fatalError("a refusal without a reason") }
    }
    if let package = EPUBCover.packagePath(container: body) {
        guard !package.isEmpty else { fatalError("an empty package path") }
    }
    if let cover = EPUBCover.coverPath(package: body, packagePath: "OEBPS/content.opf") {
        guard !cover.hasPrefix("/"), !cover.split(separator: "/").contains("..") else {
            fatalError("a cover path outside the book: \(cover)")
        }
    }
    return 0
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzCoverImage) }
    }
#endif
