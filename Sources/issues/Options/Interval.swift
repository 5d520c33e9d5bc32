import ArgumentParser

/// A time span on the command line, as systemd and `sleep` write them: a number with a unit, `s`, `m`,
/// `h` or `d` (`15m`, `6h`, `1d`), or several (`1h30m`). A bare number is refused: minutes or seconds
/// would be a guess.
struct Interval: ExpressibleByArgument, Sendable, Hashable, CustomStringConvertible {
    var seconds: Int64

    init?(argument: String) {
        var total: Int64 = 0
        var number: Int64?
        var sawUnit = false
        for character in argument.lowercased() {
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
            guard let value = number, value <= 3_650 * 86_400 / unit else { return nil }
            total += value * unit
            number = nil
            sawUnit = true
        }
        guard sawUnit, number == nil else { return nil }
        seconds = total
    }

    var duration: Duration { .seconds(seconds) }
    var description: String { "\(seconds)s" }
}
