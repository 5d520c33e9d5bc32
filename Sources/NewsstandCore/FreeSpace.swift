#if canImport(Glibc)
    import Glibc
#endif

/// The free space of the library's file system, checked before a transfer of known size and before an
/// unpack, so that an asset that cannot fit fails at once with a clear message instead of filling the
/// disk. A margin stays free for the catalog and everything else on the disk: 5 % of the file system,
/// at most 64 MiB (so that a small file system, a test's tmpfs, is not all margin).
package enum FreeSpace {
    /// What `statvfs(2)` reports for the file system holding `path`.
    package struct Figures: Sendable {
        /// Bytes an unprivileged writer may still use (`f_bavail × f_frsize`).
        package var available: Int64
        /// The file system's size (`f_blocks × f_frsize`).
        var total: Int64
        /// Bytes kept free.
        package var margin: Int64 { min(64 << 20, total / 20) }
    }

    /// The figures for `path`'s file system, or nil when `statvfs` fails (then nothing is checked).
    /// The corresponding C function is `statvfs`.
    package static func figures(at path: String) -> Figures? {
        var info = statvfs()
        guard POSIX.retrying({ statvfs(path, &info) }) == 0 else { return nil }
        let unit = Int64(info.f_frsize == 0 ? info.f_bsize : info.f_frsize)
        let (available, overflowA) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: unit)
        let (total, overflowT) = Int64(clamping: info.f_blocks).multipliedReportingOverflow(by: unit)
        return Figures(available: overflowA ? .max : available, total: overflowT ? .max : total)
    }

    /// Whether `bytes` more fit on `path`'s file system with the margin kept, given that `reclaimed`
    /// bytes of it are freed first (a partial file that is about to be truncated).
    /// - Returns: nil when they fit (or the file system cannot be asked), else the figures that say why not.
    package static func shortfall(needing bytes: Int64, at path: String, reclaimed: Int64 = 0) -> Figures? {
        guard bytes > 0, let figures = figures(at: path) else { return nil }
        let room = figures.available.saturatingAdd(reclaimed) - figures.margin
        return bytes > room ? figures : nil
    }

    /// The message of a shortfall: the size needed and the free space, both in bytes and in units.
    package static func message(_ what: String, needing bytes: Int64, figures: Figures, path: String) -> String {
        "not enough free space \(what): it needs \(ByteFormat.binary(bytes)) (\(bytes) bytes) but the file system of \(path) "
            + "has \(ByteFormat.binary(figures.available)) free, of which \(ByteFormat.binary(figures.margin)) is kept in reserve"
    }

}
