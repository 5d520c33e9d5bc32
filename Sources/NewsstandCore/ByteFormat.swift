/// Sizes for people: binary units, one decimal below 100 (`512 B`, `12.3 MiB`, `435 KiB`). The one
/// formatter of the library's messages and the command line's tables and progress (`package`: the CLI
/// shares it; an embedding app does not see it).
package enum ByteFormat {
    package static func binary(_ value: Int64) -> String {
        var bytes: [UInt8] = []
        binary(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let units: [StaticString] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

    /// ``binary(_:)`` appended to `out` as UTF-8: no string per size (`list` writes a million of them).
    package static func binary(_ value: Int64, into out: inout [UInt8]) {
        guard value >= 1024 else {
            decimal(Int(max(value, 0)), into: &out)
            out.append(contentsOf: [0x20, UInt8(ascii: "B")])
            return
        }
        var unit = 0
        var scaled = Double(value) / 1024
        while scaled >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        // Rounding may carry into the next unit (1023.96 KiB is "1.0 MiB", not "1024 KiB").
        if scaled.rounded() >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        if scaled >= 100 {
            decimal(Int(scaled.rounded()), into: &out)
        } else {
            let tenths = Int((scaled * 10).rounded())
            decimal(tenths / 10, into: &out)
            out.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0") + UInt8(tenths % 10)])
        }
        out.append(0x20)
        out.append(contentsOf: UnsafeBufferPointer(start: units[unit].utf8Start, count: units[unit].utf8CodeUnitCount))
    }

    /// A non-negative integer's decimal digits appended to `out`.
    package static func decimal(_ value: Int, into out: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
