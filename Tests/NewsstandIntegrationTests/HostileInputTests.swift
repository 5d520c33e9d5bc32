import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand

#if canImport(Glibc)
    import Glibc
#endif

/// Hostile archives and a full disk while unpacking: each is stopped with a clear message, and nothing
/// half-written reaches the issue folder.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HostileInputTests {
    static let canMount = Tmpfs.canMount

    func openLibrary(_ root: URL, _ change: (inout Library.Configuration) -> Void = { _ in }) async throws -> Library {
        var configuration = Library.Configuration()
        configuration.syncDownloads = false
        configuration.retry = RetryPolicy(
            maxAttemptsWithoutProgress: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        change(&configuration)
        return try await Library.open(at: root, configuration: configuration)
    }

    /// Every regular file under `folder`, relative.
    func files(under folder: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        return walker.compactMap { $0 as? String }.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }

    // MARK: - Disk full while unpacking

    /// 6,000 one-byte files: 6 KB of data (well inside the free-space limit), but a 4 KiB page each on a
    /// tmpfs, so the disk fills half-way through and libarchive's write fails with ENOSPC, which it reports
    /// only as a warning.
    @Test(.enabled(if: canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); not available here"))
    func aDiskThatFillsWhileUnpackingFailsTheAssetAndLeavesNothing() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { fixtures in
                let archive = fixtures.path + "/many.zip"
                try ArchiveFixtures.manySmallFiles(count: 6_000, bytesEach: 1, format: .zip, to: archive)
                server.serve("/many.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: archive))))
                try await Tmpfs.with(megabytes: 12) { mount in
                    let library = try await openLibrary(mount.appendingPathComponent("lib"))
                    try await library.addIssue(
                        named: "Full", date: IssueDate.today(),
                        assets: [AssetRequest(url: URL(string: server.url("/many.zip"))!)])
                    let summary = try await library.download()
                    try await library.shutdown()
                    #expect(summary.failed.count == 1, "\(summary)")
                    let issue = try #require(try await library.issue(named: "Full"))
                    let message = try #require(issue.assets.first?.error)
                    #expect(message.contains("disk is full"), "\(message)")
                    #expect(issue.status == .failed)
                    let staging = library.layout.staging
                    let leftovers = try FileManager.default.contentsOfDirectory(atPath: staging).filter {
                        !$0.hasSuffix(".lock")
                    }
                    #expect(leftovers.isEmpty, "\(leftovers)")
                    let folder = mount.path + "/lib/" + (try await library.summaries()[0].folderName)
                    #expect(files(under: folder).isEmpty, "nothing half-unpacked in the issue folder")
                }
            }
        }
    }

    // MARK: - Archive bombs

    /// Bytes used on disk under `folder` (allocated blocks, so sparse holes do not count).
    func allocatedBytes(under folder: String) -> Int64 {
        files(under: folder).reduce(0) { total, path in
            var info = stat()
            return total + (stat(folder + "/" + path, &info) == 0 ? Int64(info.st_blocks) * 512 : 0)
        }
    }

    /// A 2 MiB ZIP of 2 GiB of zeros: refused by its declared size before a byte is written, and, with
    /// its sizes understated, stopped by the expansion ratio once past the 64 MiB floor.
    @Test func aZipBombIsStoppedByTheExpansionRatio() async throws {
        try await withTemporaryDirectory { folder in
            let bomb = folder.path + "/bomb.zip"
            try ArchiveFixtures.writeBomb(entryName: "zeros.bin", zeroBytes: 2 << 30, format: .zip, to: bomb)
            let understated = folder.path + "/understated.zip"
            try FileManager.default.copyItem(atPath: bomb, toPath: understated)
            try ArchiveFixtures.understateZipEntrySizes(at: understated, claimedSize: 1024)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? Int)
            #expect(size < 3 << 20, "the bomb is small: \(size) bytes")

            for (archive, declared) in [(bomb, true), (understated, false)] {
                let staging = folder.path + "/staging-\(declared)"
                try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
                let started = ContinuousClock.now
                let error = #expect(throws: ArchiveError.self) {
                    try ArchiveExtractor().extract(archiveAt: archive, into: staging)
                }
                let elapsed = ContinuousClock.now - started
                let message = error.map(String.init(describing:)) ?? ""
                if declared {
                    #expect(error?.kind == .limitExceeded, "\(message)")
                    #expect(message.contains("more than 200 times"), "\(message)")
                } else {
                    // More data than the entry declares: libarchive would cut the file short; refused instead.
                    #expect(error?.kind == .corrupt, "\(message)")
                    #expect(message.contains("Too much data"), "\(message)")
                }
                // Stopped early: nothing written when the size is declared, at most the floor (and a block) when not.
                let written = allocatedBytes(under: staging)
                #expect(written <= (declared ? 0 : (64 << 20) + (1 << 20)), "\(written) bytes written")
                #expect(elapsed < .seconds(30), "\(elapsed)")
            }
        }
    }

    /// Ordinary, well-compressed content passes: 32 MiB of zeros expands far past 200 times, but stays
    /// under the floor.
    @Test func aWellCompressedArchiveUnderTheFloorPasses() async throws {
        try await withTemporaryDirectory { folder in
            let archive = folder.path + "/zeros.zip"
            try ArchiveFixtures.writeBomb(entryName: "zeros.bin", zeroBytes: 32 << 20, format: .zip, to: archive)
            let staging = folder.path + "/staging"
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
            let summary = try ArchiveExtractor().extract(archiveAt: archive, into: staging)
            #expect(summary.bytes == 32 << 20)
        }
    }

    // MARK: - Resuming against a lying server

    /// A library with one asset at `path` whose earlier run left `partial` on disk with `record`, as a cut
    /// or a kill leaves them; downloads it and returns the bytes that ended up in place.
    func resume(
        _ server: TestHTTPServer, _ path: String, partial: [UInt8], record: (String) -> ResumeRecord
    ) async throws -> [UInt8] {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root.appendingPathComponent("lib"))
            let url = server.url(path)
            try await library.addIssue(
                named: "Resumed", date: IssueDate.today(), assets: [AssetRequest(url: URL(string: url)!)])
            let id = try #require(try await library.issue(named: "Resumed")?.assets.first?.id)
            try FileManager.default.createDirectory(atPath: library.layout.downloads, withIntermediateDirectories: true)
            try Data(partial).write(to: URL(fileURLWithPath: library.layout.partialFile(id)))
            try record(url).save(library.layout.resumeRecord(id))
            let summary = try await library.download()
            try await library.shutdown()
            #expect(summary.failed.isEmpty, "\(summary)")
            let file = try #require(try await library.issue(named: "Resumed")?.assets.first?.fileURL)
            return Array(try Data(contentsOf: file))
        }
    }

    /// After a cut at 100,000 of 200,000 bytes, a 416 saying `bytes */100000` is not taken as "complete":
    /// the recorded length says otherwise, so the download starts over. Without a recorded length, too.
    @Test(arguments: [Int64(200_000), nil])
    func a416NamingTheBytesOnDiskIsNotBelieved(recordedLength: Int64?) async throws {
        try await withTestServer { server in
            let old = patternBytes(count: 200_000, seed: 1)
            let new = patternBytes(count: 100_000, seed: 2)
            server.serve("/issue.pdf", bytes: new)
            server.setFaults("/issue.pdf", Faults(status: 416, statusResponses: 1))
            let placed = try await resume(server, "/issue.pdf", partial: Array(old[..<100_000])) { url in
                ResumeRecord(url: url, etag: "\"old\"", expectedBytes: recordedLength)
            }
            let intact = placed == new
            #expect(intact, "half of the old file was kept as complete (\(placed.count) bytes)")
            #expect(server.requestCount("/issue.pdf") == 2)
        }
    }

    /// A 206 whose `Last-Modified` differs from the date sent in `If-Range` (no ETag) is of another
    /// version of the file: never appended, the download starts over.
    @Test func a206WithAChangedLastModifiedIsNotAppended() async throws {
        try await withTestServer { server in
            let old = patternBytes(count: 200_000, seed: 1)
            let new = patternBytes(count: 200_000, seed: 2)
            server.serve("/issue.pdf", bytes: new, lastModified: Date(timeIntervalSince1970: 1_750_000_000))
            server.setFaults("/issue.pdf", Faults(omitETag: true, ignoreIfRange: true))
            let placed = try await resume(server, "/issue.pdf", partial: Array(old[..<100_000])) { url in
                ResumeRecord(url: url, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", expectedBytes: 200_000)
            }
            let intact = placed == new
            #expect(intact, "the file is half old, half new (\(placed.count) bytes)")
            let ranges = server.requests("/issue.pdf").map { $0.headers.first { $0.0.lowercased() == "range" }?.1 }
            #expect(ranges.first == "bytes=100000-", "\(ranges)")
        }
    }

    // MARK: - Stalls

    /// A server trickling 50 bytes a second is under a 1 KiB-per-second limit: each attempt is given up as
    /// stalled, counts as a failed attempt though it brought a few new bytes, and the asset fails soon.
    @Test func aTricklingServerIsGivenUpOn() async throws {
        try await withTestServer { server in
            server.serve("/slow.pdf", bytes: patternBytes(count: 100_000))
            server.setFaults("/slow.pdf", Faults(bytesPerSecond: 50))
            try await withTemporaryDirectory { root in
                let library = try await openLibrary(root.appendingPathComponent("lib")) {
                    $0.stallLimit = StallLimit(minimumBytes: 1024, window: .seconds(1))
                }
                try await library.addIssue(
                    named: "Slow", date: IssueDate.today(),
                    assets: [AssetRequest(url: URL(string: server.url("/slow.pdf"))!)])
                let started = ContinuousClock.now
                let summary = try await library.download()
                let elapsed = ContinuousClock.now - started
                try await library.shutdown()
                #expect(summary.failed.count == 1, "\(summary)")
                let message = try #require(try await library.issue(named: "Slow")?.assets.first?.error)
                #expect(message.contains("stalled"), "\(message)")
                #expect(elapsed < .seconds(10), "\(elapsed)")
                #expect(server.requestCount("/slow.pdf") == 2, "two attempts, as the retry policy says")
            }
        }
    }

    /// A port that accepts connections but never answers the TLS handshake costs one handshake timeout,
    /// not one per retry.
    @Test func aSilentTLSPortIsNotRetried() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 64) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root.appendingPathComponent("lib")) {
                $0.connectTimeout = .seconds(1)
                $0.retry = RetryPolicy(
                    maxAttemptsWithoutProgress: 5, baseDelay: .milliseconds(500), maxDelay: .seconds(1))
            }
            try await library.addIssue(
                named: "Silent", date: IssueDate.today(),
                assets: [AssetRequest(url: URL(string: "https://127.0.0.1:\(port)/issue.pdf")!)])
            let started = ContinuousClock.now
            let summary = try await library.download()
            let elapsed = ContinuousClock.now - started
            try await library.shutdown()
            #expect(summary.failed.count == 1, "\(summary)")
            let message = try #require(try await library.issue(named: "Silent")?.assets.first?.error)
            #expect(message.contains("TLS handshake"), "\(message)")
            #expect(elapsed < .seconds(5), "one handshake timeout, not five: \(elapsed)")
        }
    }

    // MARK: - The library's own files

    /// Downloads one asset after `prepare` planted files in `.downloads`; returns the bytes placed.
    func download(
        _ server: TestHTTPServer, _ path: String, sha256: String? = nil,
        prepare: (Library, String) throws -> Void
    ) async throws -> [UInt8] {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root.appendingPathComponent("lib"))
            try await library.addIssue(
                named: "Planted", date: IssueDate.today(),
                assets: [AssetRequest(url: URL(string: server.url(path))!, sha256: sha256)])
            let id = try #require(try await library.issue(named: "Planted")?.assets.first?.id)
            try FileManager.default.createDirectory(atPath: library.layout.downloads, withIntermediateDirectories: true)
            try prepare(library, id)
            let summary = try await library.download()
            try await library.shutdown()
            #expect(summary.failed.isEmpty, "\(summary)")
            let file = try #require(try await library.issue(named: "Planted")?.assets.first?.fileURL)
            return Array(try Data(contentsOf: file))
        }
    }

    /// A `.part` that is a symbolic link is never written through: the file it points at is untouched and
    /// the download starts from an empty file of its own.
    @Test func aPartialFileThatIsASymlinkIsNotWrittenThrough() async throws {
        try await withTestServer { server in
            let content = patternBytes(count: 100_000)
            server.serve("/issue.pdf", bytes: content)
            try await withTemporaryDirectory { outside in
                let victim = outside.path + "/victim.txt"
                try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
                let placed = try await download(server, "/issue.pdf") { library, id in
                    try FileManager.default.createSymbolicLink(
                        atPath: library.layout.partialFile(id), withDestinationPath: victim)
                }
                let intact = placed == content
                #expect(intact, "\(placed.count) bytes placed")
                #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("precious".utf8), "written through the link")
            }
        }
    }

    /// A finished file left by an earlier run and cut short on disk since (or changed: the SHA-256 is
    /// known) is checked before it is placed, and fetched again.
    @Test(arguments: [false, true])
    func aFinishedFileCutShortOnDiskIsFetchedAgain(knownDigest: Bool) async throws {
        try await withTestServer { server in
            let content = patternBytes(count: 100_000)
            server.serve("/issue.pdf", bytes: content)
            let digest = knownDigest ? CatalogVerifier.sha256(of: try writeTemporary(content)) : nil
            let placed = try await download(server, "/issue.pdf", sha256: digest) { library, id in
                // With the digest known, the damaged file has the right size, so only the digest can tell.
                let damaged = knownDigest ? patternBytes(count: 100_000, seed: 7) : Array(content[..<60_000])
                try Data(damaged).write(to: URL(fileURLWithPath: library.layout.completedFile(id)))
                try ResumeRecord(url: server.url("/issue.pdf"), expectedBytes: knownDigest ? nil : 100_000)
                    .save(library.layout.resumeRecord(id))
            }
            let intact = placed == content
            #expect(intact, "\(placed.count) bytes placed")
            #expect(server.requestCount("/issue.pdf") == 1)
        }
    }

    func writeTemporary(_ bytes: [UInt8]) throws -> String {
        let path = try makeTemporaryDirectory().path + "/content"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: - Disk full during a transfer

    /// A body of unknown length fills the disk: the failure is stored in the catalog even though the
    /// disk is still full (a reserve is given up for the record), and the issue no longer says downloading.
    @Test(.enabled(if: canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); not available here"))
    func aDiskThatFillsDuringATransferIsRecorded() async throws {
        try await withTestServer { server in
            server.serve("/big.pdf", bytes: patternBytes(count: 12 << 20))
            server.setFaults("/big.pdf", Faults(omitContentLength: true))
            try await Tmpfs.with(megabytes: 8) { mount in
                let root = mount.appendingPathComponent("lib")
                let library = try await openLibrary(root)
                try await library.addIssue(
                    named: "Big", date: IssueDate.today(),
                    assets: [AssetRequest(url: URL(string: server.url("/big.pdf"))!)])
                let summary = try await library.download()
                try await library.shutdown()
                #expect(summary.failed.count == 1, "\(summary)")
                // Read back by a fresh library, as `show` would.
                let reopened = try await openLibrary(root)
                let issue = try #require(try await reopened.issue(named: "Big"))
                try await reopened.shutdown()
                let asset = try #require(issue.assets.first)
                #expect(asset.state == .failed, "\(asset.state)")
                #expect(asset.error?.contains("No space left") == true, "\(asset.error ?? "no error")")
                #expect(issue.status == .failed)
            }
        }
    }

    // MARK: - Names

    /// A right-to-left override in an issue name is refused; in a folder name made from other text it
    /// never reaches the disk.
    @Test func bidiControlsAreRefusedInNamesAndKeptOutOfFolderNames() async throws {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root.appendingPathComponent("lib"))
            for scalar: Unicode.Scalar in ["\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}"] {
                let name = "Invoice " + String(scalar) + "fdp.exe"
                let error = await #expect(throws: NewsstandError.self) {
                    try await library.addIssue(named: name, date: IssueDate.today())
                }
                #expect(error?.code == .invalidIssueName)
                #expect(error?.message.contains("bidirectional") == true, "\(error?.message ?? "")")
            }
            #expect(try await library.summaries().isEmpty)
            try await library.shutdown()
        }
        for scalar: Unicode.Scalar in ["\u{202E}", "\u{2067}"] {
            let folder = SafePathComponent(sanitizing: "report\(scalar)fdp.exe").value
            #expect(!folder.unicodeScalars.contains(scalar), "\(folder.debugDescription)")
        }
    }

    /// The NFC and NFD spellings of one name are one issue: the second is a clear duplicate, never a
    /// second record sharing (or silently collapsing into) one folder.
    @Test func nfcAndNfdSpellingsOfANameAreOneIssue() async throws {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root.appendingPathComponent("lib"))
            let composed = "Caf\u{E9} Mod\u{E8}le"
            let decomposed = "Cafe\u{301} Mode\u{300}le"
            #expect(Array(composed.utf8) != Array(decomposed.utf8))
            try await library.addIssue(named: composed, date: IssueDate.today())
            let error = await #expect(throws: NewsstandError.self) {
                try await library.addIssue(named: decomposed, date: IssueDate.today())
            }
            #expect(error?.code == .duplicateIssue, "\(String(describing: error))")
            let summaries = try await library.summaries()
            try await library.shutdown()
            #expect(summaries.count == 1)
            #expect(try await library.issue(named: decomposed)?.name == composed)
        }
    }

    // MARK: - Merge and remove

    /// Creates a chain of `depth` folders named `d` under `root` with a file `leaf` at the bottom, walking
    /// down by descriptor (the path is far longer than PATH_MAX).
    func makeChain(under root: String, depth: Int, leaf: String) throws {
        var current = open(root, O_RDONLY | O_DIRECTORY)
        try #require(current >= 0)
        for _ in 0..<depth {
            _ = mkdirat(current, "d", 0o755)
            let next = openat(current, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            close(current)
            try #require(next >= 0, "openat: \(errno)")
            current = next
        }
        let file = openat(current, leaf, O_WRONLY | O_CREAT, 0o644)
        close(file)
        close(current)
        try #require(file >= 0)
    }

    /// The names at the bottom of a chain made by ``makeChain(under:depth:leaf:)``.
    func namesAtBottom(of root: String, depth: Int) throws -> Set<String> {
        var current = open(root, O_RDONLY | O_DIRECTORY)
        for _ in 0..<depth {
            let next = openat(current, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            close(current)
            try #require(next >= 0)
            current = next
        }
        let stream = try #require(fdopendir(current))
        defer { closedir(stream) }
        var names = Set<String>()
        while let entry = readdir(stream) {
            names.insert(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return names.subtracting([".", ".."])
    }

    /// Two archives' 7,000-deep folder chains merge without overflowing the stack (the recursive merge
    /// died with SIGSEGV here) or holding a descriptor per level, and the tree can then be removed.
    @Test func aSevenThousandDeepChainMergesIteratively() async throws {
        try await withTemporaryDirectory { folder in
            let staging = folder.path + "/staging"
            let destination = folder.path + "/issue"
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
            try makeChain(under: destination, depth: 7_000, leaf: "first")
            try makeChain(under: staging, depth: 7_000, leaf: "second")
            try mergeStaging(staging, into: destination)
            #expect(!FileManager.default.fileExists(atPath: staging))
            #expect(try namesAtBottom(of: destination, depth: 7_000) == ["first", "second"])
            try TreeRemover.remove(destination)
            #expect(!FileManager.default.fileExists(atPath: destination))
        }
    }

    /// An issue folder holding a path far longer than PATH_MAX is removed whole: nothing is left in
    /// `.trash`, and no success is claimed over a tree left behind.
    @Test func anIssueWithAPathPastPathMaxIsRemovedWhole() async throws {
        try await withTemporaryDirectory { root in
            let library = try await openLibrary(root.appendingPathComponent("lib"))
            let issue = try await library.addIssue(named: "Deep", date: IssueDate.today())
            let content = library.layout.contentFolder(issue.folderName)
            try FileManager.default.createDirectory(atPath: content, withIntermediateDirectories: true)
            try makeChain(under: content, depth: 2_100, leaf: "bottom")  // 4,200 bytes of path
            try await library.removeIssue(named: "Deep")
            try await library.shutdown()
            #expect(!FileManager.default.fileExists(atPath: content))
            // The trash's lock stays: removals share it, sweeps take it alone.
            let trash = (try? FileManager.default.contentsOfDirectory(atPath: library.layout.trash)) ?? []
            #expect(trash.filter { $0 != ".lock" }.isEmpty, "\(trash)")
        }
    }
}
