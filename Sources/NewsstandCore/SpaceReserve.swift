import Glibc

/// A small file of allocated blocks kept in the library root, given up when the disk is full so that
/// the catalog can still record why an asset failed (a download that filled the disk must not stay
/// `downloading`). Recreated by the next download run when there is room again.
package enum SpaceReserve {
    /// Room for a few catalog writes.
    static let bytes: Int64 = 1 << 20

    static func path(_ layout: LibraryLayout) -> String { layout.root + "/.reserve" }

    /// Creates the reserve if it is missing; no room (or any other failure) is not an error: there is
    /// simply no reserve this time.
    package static func ensure(_ layout: LibraryLayout) {
        let path = path(layout)
        guard !POSIX.exists(path) else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        // posix_fallocate allocates real blocks (a sparse file would free nothing when deleted).
        let allocated = posix_fallocate(fd, 0, off_t(bytes)) == 0
        close(fd)
        if !allocated { unlink(path) }
    }

    /// Deletes the reserve; returns whether there was one to free.
    package static func release(_ layout: LibraryLayout) -> Bool {
        unlink(path(layout)) == 0
    }
}
