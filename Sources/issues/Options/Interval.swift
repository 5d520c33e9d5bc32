import ArgumentParser
import Newsstand

/// A time span on the command line, as systemd and `sleep` write them: a number with a unit, `s`, `m`,
/// `h` or `d` (`15m`, `6h`, `1d`), or several (`1h30m`). A bare number is refused: minutes or seconds
/// would be a guess.
struct Interval: ExpressibleByArgument, Sendable, Hashable, CustomStringConvertible {
    var seconds: Int64

    init?(argument: String) {
        guard let duration = Duration(spanText: argument) else { return nil }
        seconds = duration.components.seconds
    }

    var duration: Duration { .seconds(seconds) }
    var description: String { "\(seconds)s" }
}
