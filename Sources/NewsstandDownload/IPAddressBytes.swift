import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address in network order, parsed by `inet_pton`.
struct IPAddressBytes: Sendable, Hashable {
    var bytes: [UInt8]

    /// Nil when `text` is not an IP literal (a host name, or an address with a zone or brackets).
    init?(_ text: String) {
        for (family, count) in [(AF_INET, 4), (AF_INET6, 16)] {
            var buffer = [UInt8](repeating: 0, count: 16)
            let parsed = buffer.withUnsafeMutableBytes { inet_pton(family, text, $0.baseAddress) }
            if parsed == 1 {
                bytes = Array(buffer.prefix(count))
                return
            }
        }
        return nil
    }

    /// Whether the first `length` bits of both addresses are equal.
    func sharesPrefix(of length: Int, with other: IPAddressBytes) -> Bool {
        for index in 0..<bytes.count {
            let remaining = length - index * 8
            if remaining <= 0 { return true }
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if bytes[index] & mask != other.bytes[index] & mask { return false }
        }
        return true
    }
}
