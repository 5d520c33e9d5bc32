/// Sizes for people: binary units, one decimal below 100 (`512 B`, `12.3 MiB`, `435 KiB`). The one
/// formatter of the library's messages and the command line's tables and progress (`package`: the CLI
/// shares it; an embedding app does not see it).
package enum ByteFormat {
    package static func binary(_ value: Int64) -> String {
        guard value >= 1024 else { return "\(max(value, 0)) B" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
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
        if scaled >= 100 { return "\(Int(scaled.rounded())) \(units[unit])" }
        let tenths = Int((scaled * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
