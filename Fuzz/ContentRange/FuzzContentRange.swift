// libFuzzer target for `ContentRange.init`, the parser of the `Content-Range` header of 206 and 416
// responses. A range it accepts decides where bytes are appended and how long the file is expected to be,
// so it must be one RFC 9110 §14.4 allows: 0 <= start <= end < total, and it must print back to itself.
import Foundation
import FuzzSupport
import NewsstandCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentRange(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let range = ContentRange(header) else { return 0 }
    func fail(_ why: String) -> Never {
        fatalError("\(why): \(range) from \(header.debugDescription)")
    }
    switch (range.start, range.end) {
    case (nil, nil):
        break
    case (let start?, let end?):
        if start < 0 { fail("negative start") }
        if start > end { fail("start after end") }
        if let total = range.total, end >= total { fail("end not below the total") }
    default:
        fail("a start without an end, or an end without a start")
    }
    if let total = range.total, total < 0 { fail("negative total") }
    let printed =
        "bytes " + (range.start.map { "\($0)-\(range.end ?? -1)" } ?? "*") + "/" + (range.total.map { "\($0)" } ?? "*")
    guard ContentRange(printed) == range else { fail("does not read back from \(printed.debugDescription)") }
    return 0
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzContentRange) }
    }
#endif
