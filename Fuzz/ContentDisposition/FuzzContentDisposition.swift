// libFuzzer target for the file name a download gets from `Content-Disposition`: the input is the header
// value, passed through `FileNaming.name(for:contentDisposition:)` exactly as a finished download is named.
// Whatever the server sends, the name must be one harmless path component.
import Foundation
import FuzzSupport
import NewsstandCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentDisposition(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let name = FileNaming.name(for: asset, contentDisposition: header)
    checkComponent(name, header: header)
    // The name a second asset gets when the first one took `name`.
    checkComponent(FileNaming.withSuffix(name, 12), header: header)
    return 0
}

/// The URL's own last component is a safe name, so anything unsafe came from the header.
private let asset: AssetDownload = {
    guard let url = URL(string: "https://fuzz.example/issues/asset.bin") else { fatalError("bad fixed URL") }
    return AssetDownload(id: "fuzz", url: url)
}()

private func checkComponent(_ name: String, header: String) {
    func fail(_ why: String) -> Never {
        fatalError("\(why): name \(name.debugDescription) from header \(header.debugDescription)")
    }
    if name.isEmpty { fail("empty name") }
    if name == "." || name == ".." { fail("names a folder, not a file") }
    if name.utf8.first == UInt8(ascii: ".") { fail("hidden name") }  // bytes: ".\u{301}" is one Character
    if name.utf8.count > SafePathComponent.maxUTF8Length { fail("longer than the cap") }
    if name.utf8.contains(UInt8(ascii: "/")) { fail("holds '/'") }
    if name.utf8.contains(UInt8(ascii: "\\")) { fail("holds '\\'") }
    if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
        fail("holds a control character")
    }
    if name.first?.isWhitespace == true || name.last?.isWhitespace == true { fail("surrounding space") }
    if !SafePathComponent.isSafe(name) { fail("refused by SafePathComponent.isSafe") }
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzContentDisposition) }
    }
#endif
