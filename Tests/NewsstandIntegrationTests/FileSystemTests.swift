import Foundation
import Glibc
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The file-system primitives under `Internal/`: the one errno-to-error path, the file lock, the tree
/// remover, and the blocking pool they run on.
@Suite(.timeLimit(.minutes(5))) struct FileSystemTests {
    @Test func failedCallKeepsErrnoAndNamesThePath() async throws {
        try await withTemporaryDirectory { folder in
            let missing = folder.path + "/missing/file"
            let error = try #require(throws: NewsstandError.self) { try POSIX.open(missing, O_RDONLY) }
            #expect(error.errno == ENOENT)
            #expect(error.code == .io)
            #expect(error.message == "cannot open \(missing): \(POSIX.describe(ENOENT))")
            #expect(try POSIX.openIfExists(missing, O_RDONLY) == nil)
        }
    }

    @Test func spaceErrorsAreDiskFull() {
        for code in [ENOSPC, EFBIG, EDQUOT] {
            let error = NewsstandError.posix(code, "cannot write", path: "/x")
            #expect(error.code == .diskFull)
            #expect(error.errno == code)
        }
    }

    @Test func archiveSystemErrorsKeepErrno() {
        let error = ArchiveError.system(EACCES, "cannot open the folder", entryPath: "a/b")
        #expect(error.kind == .io)
        #expect(error.errno == EACCES)
        #expect(error.message == "cannot open the folder: \(POSIX.describe(EACCES))")
    }

    /// A resume record is written in place while old and new fit in a page (no new inode per save): a
    /// shorter record reads back whole over the longer one's padding; a record past a page is replaced by
    /// rename; a symbolic link in its place is replaced, never written through.
    @Test func resumeRecordRewritesInPlaceWithinAPage() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.path + "/a.resume.json"
            func inode() throws -> ino_t {
                var info = stat()
                try #require(lstat(path, &info) == 0)
                return info.st_ino
            }
            var record = ResumeRecord(
                url: "https://cdn.example.com/" + String(repeating: "x", count: 300), etag: "\"v1\"", expectedBytes: 5 << 20)
            try record.save(path)
            let first = try inode()
            record.url = "https://cdn.example.com/short"
            record.placedAs = "issue.pdf"
            try record.save(path)
            #expect(try inode() == first)
            #expect(ResumeRecord.load(path) == record)
            #expect(POSIX.fileSize(path) ?? 0 > 300)  // padded, not truncated

            record.url = "https://cdn.example.com/" + String(repeating: "y", count: ResumeRecord.inPlaceLimit)
            try record.save(path)
            #expect(try inode() != first)
            #expect(ResumeRecord.load(path) == record)

            let outside = folder.path + "/outside"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: outside))
            try POSIX.unlinkIfPresent(path)
            #expect(symlink(outside, path) == 0)
            record.url = "https://cdn.example.com/short"
            try record.save(path)
            #expect(try String(contentsOfFile: outside, encoding: .utf8) == "keep")
            #expect(ResumeRecord.load(path) == record)
        }
    }

    @Test func fileLockTryReturnsNilWhileHeldAndTheLockAfterwards() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.path + "/lock"
            var held: FileLock? = try FileLock(path: path)
            // flock locks belong to an open file description, so a second descriptor in this process is refused.
            #expect(try FileLock.try(path: path) == nil)
            withExtendedLifetime(held) {}
            held = nil
            let again = try #require(try FileLock.try(path: path))
            #expect(try FileLock.try(path: path) == nil)
            withExtendedLifetime(again) {}
        }
    }

    /// A lock file may be deleted by its holder (a removal deletes its issue's). A process that opened it just
    /// before and was waiting for the lock must not end up holding the deleted file's lock, unseen by anyone who
    /// opens the path afterwards: it takes the lock of the file the path names now.
    @Test func aWaiterOfALockFileItsHolderDeletedLocksThePathsFileNow() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.path + "/issue.lock"
            var holder: FileLock? = try FileLock(path: path)
            let inode = try #require(fileStatus(path)).st_ino
            let taken = Locked<FileLock?>(nil)
            let waiter = Thread {
                let lock = try? FileLock(path: path)
                taken.withLock { $0 = lock }
            }
            waiter.start()
            // Waits until the waiter is blocked on this very file (a "->" line of /proc/locks names its inode).
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
                if locks.split(separator: "\n").contains(where: { $0.contains("->") && $0.contains(":\(inode) ") }) { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            try POSIX.unlinkIfPresent(path)
            withExtendedLifetime(holder) {}
            holder = nil
            while taken.withLock({ $0 == nil }), ContinuousClock.now < deadline + .seconds(20) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let lock = try #require(taken.withLock { $0 })
            // It holds the lock of the file at the path (made again), so a third taker is refused.
            #expect(FileLock.isHeld(path: path))
            #expect(try FileLock.try(path: path) == nil)
            withExtendedLifetime(lock) {}
        }
    }

    @Test func assetLocksExcludeEachOtherPerAssetAndPerDescriptor() async throws {
        try await withTemporaryDirectory { folder in
            let layout = LibraryLayout(root: folder.path)
            // No lock file yet: nothing is held, and asking creates nothing.
            #expect(!AssetLock.isHeld("00000000deadbeef", layout: layout))
            try POSIX.makeDirectory(layout.downloads)
            #expect(!FileManager.default.fileExists(atPath: layout.assetLocks))
            var held = try AssetLock.try("00000000deadbeef", layout: layout)
            #expect(held != nil)
            #expect(AssetLock.isHeld("00000000deadbeef", layout: layout))
            // Open-file-description locks: a second descriptor in this process is refused, as another process is.
            #expect(try AssetLock.try("00000000deadbeef", layout: layout) == nil)
            // Another asset's byte is its own.
            #expect(!AssetLock.isHeld("00000000feedface", layout: layout))
            let other = try #require(try AssetLock.try("00000000feedface", layout: layout))
            withExtendedLifetime(held) {}
            held = nil
            #expect(!AssetLock.isHeld("00000000deadbeef", layout: layout))
            let again = try #require(try AssetLock.try("00000000deadbeef", layout: layout))
            #expect(AssetLock.isHeld("00000000feedface", layout: layout))
            withExtendedLifetime((other, again)) {}
            // Several assets on one descriptor: all of them, or none when one is held elsewhere.
            let ids = ["00000000000000c1", "00000000000000c2", "00000000000000c3"]
            var group = try AssetLock.try(all: ids, layout: layout)
            #expect(group != nil && ids.allSatisfy { AssetLock.isHeld($0, layout: layout) })
            withExtendedLifetime(group) {}
            group = nil
            let blocker = try #require(try AssetLock.try("00000000000000c2", layout: layout))
            #expect(try AssetLock.try(all: ids, layout: layout) == nil)
            #expect(!AssetLock.isHeld("00000000000000c1", layout: layout) && !AssetLock.isHeld("00000000000000c3", layout: layout))
            withExtendedLifetime(blocker) {}
            // One file for every asset, however many were locked.
            #expect(try FileManager.default.contentsOfDirectory(atPath: layout.downloads) == ["asset-locks"])
        }
    }

    @Test func recordSparesAreEmptiedKeptAndRenamedIntoPlace() async throws {
        try await withTemporaryDirectory { folder in
            let layout = LibraryLayout(root: folder.path)
            try POSIX.makeDirectory(layout.downloads)
            let spares = RecordSpares(layout: layout)
            let first = layout.resumeRecord("00000000000000a1")
            try ResumeRecord(url: "http://h/a", etag: "\"v1\"", expectedBytes: 10).save(first)
            var info = stat()
            #expect(stat(first, &info) == 0)
            let inode = info.st_ino
            try spares.retire(first)
            #expect(!FileManager.default.fileExists(atPath: first))
            // The next asset's record is the same file, empty: it reads as no record until written.
            let second = layout.resumeRecord("00000000000000b2")
            RecordSpares(layout: layout).place(at: second)
            #expect(stat(second, &info) == 0 && info.st_ino == inode && info.st_size == 0)
            #expect(ResumeRecord.load(second) == nil)
            // A file already in place is left alone.
            try ResumeRecord(url: "http://h/b", expectedBytes: 5).save(second)
            spares.place(at: second)
            #expect(ResumeRecord.load(second)?.url == "http://h/b")
            // A record with a second name (a hard link to a file outside) is deleted, never emptied through.
            let outside = folder.path + "/outside"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: outside))
            try FileManager.default.removeItem(atPath: second)
            try FileManager.default.linkItem(atPath: outside, toPath: second)
            try spares.retire(second)
            #expect(!FileManager.default.fileExists(atPath: second))
            #expect(try String(contentsOfFile: outside, encoding: .utf8) == "keep")
            // Under a spare's name, anything but an empty file with one name is deleted, never put in place.
            let fifo = "\(layout.downloads)/\(LibraryLayout.recordSparePrefix)fifo"
            #expect(mkfifo(fifo, 0o644) == 0)
            let stale = "\(layout.downloads)/\(LibraryLayout.recordSparePrefix)stale"
            try Data("{}".utf8).write(to: URL(fileURLWithPath: stale))
            let third = layout.resumeRecord("00000000000000c3")
            RecordSpares(layout: layout).place(at: third)
            #expect(!FileManager.default.fileExists(atPath: third))
            #expect(!FileManager.default.fileExists(atPath: fifo) && !FileManager.default.fileExists(atPath: stale))
            // A record under another asset's name (a power cut kept a spare's rename, not its emptying) is none.
            try ResumeRecord(url: "http://h/a", expectedBytes: 10).save(first)
            try FileManager.default.moveItem(atPath: first, toPath: third)
            #expect(ResumeRecord.load(third) == nil)
            try FileManager.default.removeItem(atPath: third)
            // At most `kept` spares: the rest are deleted.
            let fresh = RecordSpares(layout: layout)
            for n in 0..<(RecordSpares.kept + 5) {
                let path = layout.resumeRecord(String(format: "%016x", n + 0x100))
                try ResumeRecord(url: "http://h/\(n)").save(path)
                try fresh.retire(path)
            }
            let kept = try FileManager.default.contentsOfDirectory(atPath: layout.downloads)
            #expect(kept.count == RecordSpares.kept && kept.allSatisfy(LibraryLayout.isSharedDownloadFile), "\(kept)")
        }
    }

    @Test func assetLockOffsetsAreStableAndSpread() {
        // The byte must be the same in every process and version that shares a library.
        // FNV-1a (64-bit) of the id's bytes, below 2^62: a change of the hash would split processes' locks.
        #expect(AssetLock.offset(of: "00000000deadbeef") == 4_278_751_143_158_418_997)
        let offsets = Set((0..<10_000).map { AssetLock.offset(of: String(format: "%016llx", UInt64($0))) })
        #expect(offsets.count == 10_000)
        #expect(offsets.allSatisfy { $0 >= 0 && $0 < 1 << 62 })
    }

    @Test func fileLockNamesAPathItCannotOpen() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.path + "/missing/lock"
            let error = try #require(throws: NewsstandError.self) { try FileLock.try(path: path) }
            #expect(error.errno == ENOENT)
            #expect(error.message.contains(path))
        }
    }

    // MARK: - TreeRemover

    @Test func symlinkToAFolderOutsideIsRemovedAsALink() async throws {
        try await withTemporaryDirectory { folder in
            let outside = folder.path + "/outside"
            try FileManager.default.createDirectory(atPath: outside + "/keep", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: outside + "/keep/file", contents: Data("x".utf8)))
            let tree = folder.path + "/tree"
            try FileManager.default.createDirectory(atPath: tree + "/sub", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: tree + "/sub/link", withDestinationPath: outside)
            try FileManager.default.createSymbolicLink(atPath: folder.path + "/rootLink", withDestinationPath: outside)

            try TreeRemover.remove(tree)
            try TreeRemover.remove(folder.path + "/rootLink")

            #expect(!POSIX.exists(tree))
            #expect(!POSIX.exists(folder.path + "/rootLink"))
            #expect(POSIX.fileSize(outside + "/keep/file") == 1)
        }
    }

    @Test func missingPathIsFineAndAFileIsRemoved() async throws {
        try await withTemporaryDirectory { folder in
            try TreeRemover.remove(folder.path + "/missing")
            let file = folder.path + "/file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            try TreeRemover.remove(file)
            #expect(!POSIX.exists(file))
        }
    }

    @Test func foldersWithoutOwnerAccessAreRemoved() async throws {
        try await withTemporaryDirectory { folder in
            let tree = folder.path + "/tree"
            try FileManager.default.createDirectory(atPath: tree + "/locked/inner", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: tree + "/locked/inner/file", contents: Data()))
            #expect(chmod(tree + "/locked/inner", 0o500) == 0)
            #expect(chmod(tree + "/locked", 0o000) == 0)
            try TreeRemover.remove(tree)
            #expect(!POSIX.exists(tree))
        }
    }

    /// 7,000 nested folders: recursion of that depth would risk the stack, and one open folder per level would
    /// exceed the usual limit of 1,024 descriptors.
    @Test func aSevenThousandDeepChainIsRemoved() async throws {
        try await withTemporaryDirectory { folder in
            let root = folder.path + "/deep"
            try makeChain(root, depth: 7_000, name: "d")
            try TreeRemover.remove(root)
            #expect(!POSIX.exists(root))
        }
    }

    @Test func pathsLongerThanPathMaxAreRemoved() async throws {
        try await withTemporaryDirectory { folder in
            let root = folder.path + "/long"
            let name = String(repeating: "n", count: 200)
            // 30 levels of 201 bytes: the deepest file's path is over 6,000 bytes, past PATH_MAX (4,096).
            try makeChain(root, depth: 30, name: name)
            try TreeRemover.remove(root)
            #expect(!POSIX.exists(root))
        }
    }

    /// Creates `root` and a chain of `depth` folders named `name` below it, each holding a file, through
    /// descriptors (the full paths may exceed PATH_MAX).
    private func makeChain(_ root: String, depth: Int, name: String) throws {
        try POSIX.makeDirectory(root)
        var current = try POSIX.open(root, O_RDONLY | O_DIRECTORY)
        defer { close(current) }
        // Plain checks, not #require: thousands of expectations would dominate the test's time.
        for level in 0..<depth {
            let file = openat(current, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            guard mkdirat(current, name, 0o755) == 0, file >= 0 else {
                throw NewsstandError.posix(errno, "cannot build the chain at level \(level) in", path: root)
            }
            close(file)
            let next = try POSIX.call("cannot open level \(level) in", path: root) {
                openat(current, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
            close(current)
            current = next
        }
    }

    // MARK: - runBlocking

    /// Clean-up after Ctrl-C runs through `runBlocking` in a cancelled task; `runIfActive` alone would skip it.
    @Test func blockingWorkRunsInACancelledTask() async throws {
        let task = Task { () async throws -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            #expect(Task.isCancelled)
            return try await runBlocking { 42 }
        }
        #expect(try await task.value == 42)
    }
}
