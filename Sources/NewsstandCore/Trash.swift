#if canImport(Glibc)
    import Glibc
#endif
import Foundation

/// The library's `.trash`: content folders of removed issues on their way out.
///
/// A removal renames folders into it and then deletes them; a sweep deletes what removals cut short by a
/// kill left there. Several processes do both at once, so the folder itself is never deleted (a removal
/// renaming into it would fail), and a sweep deletes entries only when no removal is live: every removal
/// holds `.trash/.lock` shared from before its first rename until its last deletion (``hold(_:)``), and a
/// sweep takes it exclusively without waiting (``sweep(_:)``), skipping the sweep when a removal holds it.
/// Blocking: call off the concurrency pool.
package enum Trash {
    static func lockFile(_ layout: LibraryLayout) -> String { layout.trash + "/.lock" }

    /// Creates `.trash` when needed and holds its lock shared, for a removal: no sweep runs while the
    /// returned lock lives. A sweep in progress is waited for (it only deletes files).
    /// - Throws: ``NewsstandError`` naming the folder or the lock file.
    package static func hold(_ layout: LibraryLayout) throws -> FileLock {
        try POSIX.makeDirectory(layout.trash)
        return try FileLock(path: lockFile(layout), shared: true)
    }

    /// Runs `body` with the entries of `.trash` (its lock file aside) when no removal is live, holding the
    /// lock exclusively meanwhile; does nothing when there is no trash or a removal holds the lock.
    /// - Returns: Whether `body` ran.
    @discardableResult
    package static func whenIdle(_ layout: LibraryLayout, _ body: (_ entries: [String]) throws -> Void) throws -> Bool {
        guard POSIX.exists(layout.trash) else { return false }
        guard let lock = try FileLock.try(path: lockFile(layout)) else { return false }
        defer { withExtendedLifetime(lock) {} }
        let names = try FileManager.default.contentsOfDirectory(atPath: layout.trash)
        try body(names.filter { $0 != ".lock" }.sorted().map { "\(layout.trash)/\($0)" })
        return true
    }

    /// Deletes what removals cut short left in `.trash`, unless a removal is live (then they are left for a
    /// later sweep). One `lstat` when there is no trash.
    /// - Throws: ``NewsstandError`` naming what could not be deleted.
    package static func sweep(_ layout: LibraryLayout) throws {
        try whenIdle(layout) { entries in
            for entry in entries { try TreeRemover.remove(entry) }
        }
    }
}
