import Foundation
import Synchronization

/// Work over `count` items on several threads, in stripes: stripe `s` of `n` takes items s, s + n, s + 2n…, so
/// that each thread meets large and small items alike. For reads of a whole catalog (`verify` decodes 100,000
/// records on both cores).
package enum Stripes {
    /// `body` once per stripe, on up to `threads` threads (never more than 8, nor more than `count`).
    /// - Returns: Each stripe's result, in stripe order.
    /// - Throws: The error of the first stripe (in stripe order) that threw.
    package static func map<T: Sendable>(
        count: Int, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ body: @Sendable (_ indices: StrideTo<Int>) throws -> T
    ) throws -> [T] {
        let stripes = max(1, min(threads, 8, count))
        let results = Mutex<[Int: Result<T, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: stripes) { stripe in
            let result = Result { try body(stride(from: stripe, to: count, by: stripes)) }
            results.withLock { $0[stripe] = result }
        }
        let collected = results.withLock { $0 }
        return try (0..<stripes).compactMap { try collected[$0]?.get() }
    }
}
