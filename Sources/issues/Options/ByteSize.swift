import ArgumentParser

/// A size on the command line: plain bytes (`1048576`) or a number with a unit (`16G`, `500M`, `2K`,
/// `1.5GiB`). The units follow GNU coreutils (`head -c`, `sort -S`): `K`, `M`, `G`, `T` and `KiB` … `TiB`
/// are powers of 1024, `KB` … `TB` powers of 1000, `B` is bytes. Anything else, a negative size or one
/// past `Int64`, is not a size, so swift-argument-parser reports a usage error (exit 64).
struct ByteSize: ExpressibleByArgument, Sendable, Hashable, CustomStringConvertible {
    var bytes: Int64

    init(bytes: Int64) {
        self.bytes = bytes
    }

    init?(argument: String) {
        let digits = argument.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard let multiplier = ByteSize.multipliers[argument.dropFirst(digits.count).uppercased()] else { return nil }
        if let whole = Int64(digits) {
            // Integer arithmetic, so that a size near Int64.max is exact or refused, never rounded.
            let (product, overflow) = whole.multipliedReportingOverflow(by: multiplier)
            guard !overflow else { return nil }
            bytes = product
        } else {
            // A fraction with a unit (`1.5G`) rounds down to whole bytes; `0.5` alone is not a size.
            guard multiplier > 1, let amount = Double(digits), amount.isFinite else { return nil }
            let value = (amount * Double(multiplier)).rounded(.down)
            guard value < 0x1p63 else { return nil }
            bytes = Int64(value)
        }
    }

    /// The shortest exact spelling: `16G` rather than `17179869184`.
    var description: String {
        for (suffix, multiplier) in [("T", Int64(1) << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)]
        where bytes >= multiplier && bytes % multiplier == 0 {
            return "\(bytes / multiplier)\(suffix)"
        }
        return "\(bytes)"
    }

    var defaultValueDescription: String { description }

    private static let multipliers: [String: Int64] = [
        "": 1, "B": 1,
        "K": 1 << 10, "KIB": 1 << 10, "KB": 1_000,
        "M": 1 << 20, "MIB": 1 << 20, "MB": 1_000_000,
        "G": 1 << 30, "GIB": 1 << 30, "GB": 1_000_000_000,
        "T": 1 << 40, "TIB": 1 << 40, "TB": 1_000_000_000_000,
    ]
}
