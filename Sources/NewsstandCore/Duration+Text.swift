import Foundation

extension Duration {
    /// Seconds as a `TimeInterval`.
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// `3d 12h`, `2h 30m`, `15m`, `45s`: the two largest units.
    package var shortText: String {
        let total = max(Int64(timeInterval.rounded()), 0)
        let parts: [(Int64, String)] = [(total / 86_400, "d"), (total / 3600 % 24, "h"), (total / 60 % 60, "m"), (total % 60, "s")]
        let shown = parts.drop { $0.0 == 0 }.prefix(2).filter { $0.0 > 0 }
        return shown.isEmpty ? "0s" : shown.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }

    /// Reads a span as systemd and `sleep` write them, what ``shortText`` prints: numbers with a unit, `s`,
    /// `m`, `h` or `d` (`15m`, `6h`, `1h30m`, `3d 12h`). Nil for a bare number (minutes or seconds would be
    /// a guess), an unknown unit, or more than ten years.
    package init?(spanText text: String) {
        var total: Int64 = 0
        var number: Int64?
        var sawUnit = false
        for character in text.lowercased() {
            if character == " " {
                guard number == nil else { return nil }
                continue
            }
            if let digit = character.wholeNumberValue, character.isASCII {
                let (shifted, overflow) = (number ?? 0).multipliedReportingOverflow(by: 10)
                guard !overflow, shifted <= Int64.max - Int64(digit) else { return nil }
                number = shifted + Int64(digit)
                continue
            }
            let unit: Int64
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86_400
            default: return nil
            }
            guard let value = number, value <= 3_650 * 86_400 / unit, total <= 3_650 * 86_400 - value * unit else {
                return nil
            }
            total += value * unit
            number = nil
            sawUnit = true
        }
        guard sawUnit, number == nil else { return nil }
        self = .seconds(total)
    }
}
