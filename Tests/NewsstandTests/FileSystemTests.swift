import Foundation
import Glibc
import NewsstandTestSupport
import Testing

@testable import Newsstand

/// The file-system primitives under `Internal/`: the one errno-to-error path and the file lock.
@Suite struct FileSystemTests {
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

    @Test func fileLockNamesAPathItCannotOpen() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.path + "/missing/lock"
            let error = try #require(throws: NewsstandError.self) { try FileLock.try(path: path) }
            #expect(error.errno == ENOENT)
            #expect(error.message.contains(path))
        }
    }
}
