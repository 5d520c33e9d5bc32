import Foundation

/// Reads and writes `library.json`. Every change is a read-modify-write under the library's file
/// lock, so concurrent processes never lose each other's changes. Blocking: call off the
/// concurrency pool.
struct ManifestStore: Sendable {
    let layout: LibraryLayout

    /// Loads the manifest without locking (the file is only ever replaced by `rename`, so a reader
    /// sees either the old or the new document). A missing file is an empty library.
    func load() throws -> Manifest {
        guard let data = try AtomicFile.read(layout.manifest) else { return Manifest() }
        return try Manifest.decode(data, path: layout.manifest)
    }

    /// Applies `body` to the current manifest under the lock and writes the result if it changed.
    /// If `body` throws, nothing is written.
    /// - Returns: `body`'s result and the manifest as it now stands on disk.
    func update<T>(_ body: (inout Manifest) throws -> T) throws -> (T, Manifest) {
        let lock = try FileLock(path: layout.lockFile)
        let original = try load()
        var manifest = original
        let result = try body(&manifest)
        if manifest != original {
            manifest.version = Manifest.currentVersion
            try AtomicFile.write(try manifest.encoded(), to: layout.manifest)
        }
        _ = consume lock
        return (result, manifest)
    }
}
