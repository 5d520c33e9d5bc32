import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs for tests of a full disk (mounting needs root with CAP_SYS_ADMIN, as the test
/// machines run; tests skip with a reason where it cannot be had).
public enum Tmpfs {
    /// Whether a tmpfs can be mounted here; probed once.
    public static let canMount: Bool = {
        guard geteuid() == 0, let probe = try? makeTemporaryDirectory() else { return false }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard
            (try? CommandRunner.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]))?.status == 0
        else { return false }
        _ = try? CommandRunner.run("/bin/umount", [probe.path])
        return true
    }()

    /// Runs `body` with a fresh tmpfs of `megabytes` mounted on a temporary folder, unmounted after.
    public static func with(megabytes: Int, _ body: (URL) async throws -> Void) async throws {
        let mountPoint = try makeTemporaryDirectory()
        let mounted = try CommandRunner.run(
            "/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint.path])
        guard mounted.status == 0 else {
            try? FileManager.default.removeItem(at: mountPoint)
            throw MountError(description: "mount: \(mounted.stderr)")
        }
        defer {
            _ = try? CommandRunner.run("/bin/umount", [mountPoint.path])
            try? FileManager.default.removeItem(at: mountPoint)
        }
        try await body(mountPoint)
    }
}

/// A tmpfs could not be mounted.
public struct MountError: Error, CustomStringConvertible {
    public var description: String
}
