import Foundation
import Logging
import NewsstandCatalog
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// `library.low-space`: the library tells its hooks the disk is filling while there is still room to act
/// (prune, move files), instead of the next download failing for space.
extension Library {
    /// Announces `library.low-space` when the library's file system has less free than the configured
    /// threshold and it was not announced since the space was last above it; forgets the announcement once
    /// the space is back. One `statvfs`; the announcement is an event-only commit of the log. Called after
    /// each download commit; a failure is logged, never thrown (the download itself is done).
    nonisolated func noteFreeSpace() {
        guard let threshold = configuration.lowSpaceThreshold, let figures = FreeSpace.figures(at: layout.root) else { return }
        let mark = layout.lowSpaceMark
        guard figures.available < threshold else {
            if POSIX.exists(mark) { unlink(mark) }
            return
        }
        // O_EXCL: of the processes that see the space low, only the one that makes the mark announces.
        let fd = Glibc.open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        close(fd)
        let detail =
            "\(figures.available) bytes free (\(ByteFormat.binary(figures.available))), under the \(ByteFormat.binary(threshold)) "
            + "the library warns at"
        do {
            try catalog.announce([CatalogEvent(kind: .libraryLowSpace, detail: detail)])
        } catch {
            // Not announced: the next commit tries again.
            unlink(mark)
            logger.warning("cannot record that the library is low on space: \(error)")
        }
    }
}
