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
}
