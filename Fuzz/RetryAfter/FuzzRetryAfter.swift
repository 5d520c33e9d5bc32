// libFuzzer target for `RetryAfter.parse`, which reads the `Retry-After` header of 408, 429 and 5xx
// responses (delay-seconds or an HTTP-date). A number from a server must never trap, and a delay is never
// negative.
import Foundation
import FuzzSupport
import NewsstandCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRetryAfter(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let delay = RetryAfter.parse(header) else { return 0 }
    if delay < .zero { fatalError("negative delay \(delay) from \(header.debugDescription)") }
    // What the retry loop does with it: capped by the policy.
    let waited = RetryPolicy().delay(attempt: 1, retryAfter: delay, madeProgress: false)
    if waited < .zero || waited > delay { fatalError("policy turned \(delay) into \(waited)") }
    return 0
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzRetryAfter) }
    }
#endif
