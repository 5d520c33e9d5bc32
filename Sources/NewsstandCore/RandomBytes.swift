internal import CSystemShims

/// Random values straight from the kernel (getrandom(2)). `UInt64.random(in:)` opened /dev/urandom for
/// every value in the static release build: 200,000 opens (2.2 s of system time) in an import of 100,000
/// issues, one per asset identifier.
package enum RandomBytes {
    package static func uint64() -> UInt64 {
        var value: UInt64 = 0
        if newsstand_random_bytes(&value, 8) != 0 {
            value = UInt64.random(in: 0...UInt64.max)  // no getrandom: the standard library's way
        }
        return value
    }
}
