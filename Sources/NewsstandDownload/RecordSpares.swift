internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Foundation
import Synchronization
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// The resume-record files of finished downloads, emptied and kept under hidden names
/// (`.downloads/.spare-record-<random>`), to be renamed into place for the next downloads instead of
/// being deleted and created again.
///
/// Why: a run of 200 assets created and deleted 200 records, and on ext4 without a journal every new
/// inode is found by stepping over every inode freed in the last minute (in a profile of 200 × 5 MiB
/// after a clean-up, inode allocation took about a sixth of the machine's CPU).
///
/// A spare is empty, and an empty record reads as none (``ResumeRecord/load(_:)``: start from zero), so
/// one renamed into place says nothing until its download writes a record into it (in place, see
/// ``ResumeRecord/save(_:)``). Two processes may pick the same spare: one rename fails, and that download
/// creates its record as before. Blocking: call off the concurrency pool.
final class RecordSpares: Sendable {
    /// Enough for every transfer of a run (`jobs`) and a few finishing.
    static let kept = 32

    private let layout: LibraryLayout
    /// nil until the download folder was listed (at the first ``place(at:)``).
    private let spares = Mutex<[String]?>(nil)

    init(layout: LibraryLayout) {
        self.layout = layout
    }

    /// Puts an empty spare at `path` (an asset's record, which the caller's asset lock makes its own)
    /// unless a file is there already. Best effort: with no spare, the record is created when written.
    func place(at path: String) {
        guard !POSIX.exists(path) else { return }
        while let spare = take() {
            // Only an empty plain file with one name: anything else under a spare's name is deleted.
            guard Self.isEmptyFile(spare) else {
                _ = unlink(spare)
                continue
            }
            if rename(spare, path) == 0 { return }
        }
    }

    private static func isEmptyFile(_ path: String) -> Bool {
        guard let info = POSIX.linkStatus(path) else { return false }
        return POSIX.isSoleFile(info) && info.st_size == 0
    }

    /// Empties the record at `path` and keeps it as a spare, or deletes it when enough are kept (or when
    /// it is not a plain file with one name, which is never written through).
    func retire(_ path: String) throws {
        let count = spares.withLock { spares in
            let list = listed(spares)
            spares = list
            return list.count
        }
        guard count < RecordSpares.kept, Self.empty(path) else {
            try POSIX.unlinkIfPresent(path)
            return
        }
        let spare = "\(layout.downloads)/\(LibraryLayout.recordSparePrefix)\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        guard rename(path, spare) == 0 else {
            try POSIX.unlinkIfPresent(path)
            return
        }
        spares.withLock { $0 = ($0 ?? []) + [spare] }
    }

    private func take() -> String? {
        spares.withLock { spares in
            var list = listed(spares)
            defer { spares = list }
            return list.popLast()
        }
    }

    /// The spares known, listing the download folder the first time.
    private func listed(_ spares: [String]?) -> [String] {
        if let spares { return spares }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.downloads)) ?? []
        return names.filter { $0.hasPrefix(LibraryLayout.recordSparePrefix) }.map { "\(layout.downloads)/\($0)" }
    }

    /// Truncates the regular file at `path` to nothing; false for a link, another kind of file, or a file
    /// with a second name (a hard link would see the truncation).
    private static func empty(_ path: String) -> Bool {
        guard let (fd, _) = POSIX.openSoleFile(path, O_WRONLY) else { return false }
        defer { _ = close(fd) }
        return ftruncate(fd, 0) == 0
    }
}
