import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted for the test (this needs root, as the test machines run): downloads and
/// unpacks that cannot fit fail before writing, with a message naming the size and the free space.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FreeSpaceTests {
    static let canMount = Tmpfs.canMount

    func openLibrary(_ root: URL) async throws -> Library {
        var configuration = Library.Configuration()
        configuration.syncDownloads = false
        configuration.retry = RetryPolicy(
            maxAttemptsWithoutProgress: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        return try await Library.open(at: root, configuration: configuration)
    }

    func failure(_ library: Library, _ name: String) async throws -> String {
        try #require(try await library.issue(named: name)?.assets.first?.error)
    }

    @Test(.enabled(if: canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); not available here"))
    func aTransferThatCannotFitFailsBeforeAnyByteIsWritten() async throws {
        try await withTestServer { server in
            server.serve("/big.pdf", bytes: patternBytes(count: 12 << 20))
            server.serve("/small.pdf", bytes: patternBytes(count: 100_000))
            try await Tmpfs.with(megabytes: 8) { mount in
                let library = try await openLibrary(mount.appendingPathComponent("lib"))
                try await library.addIssue(
                    named: "Big", date: IssueDate.today(),
                    assets: [AssetRequest(url: URL(string: server.url("/big.pdf"))!)])
                try await library.addIssue(
                    named: "Small", date: IssueDate.today(),
                    assets: [AssetRequest(url: URL(string: server.url("/small.pdf"))!)])
                let summary = try await library.download()
                try await library.shutdown()
                #expect(summary.failed.count == 1 && summary.finished.count == 1, "\(summary)")
                let message = try await failure(library, "Big")
                #expect(message.contains("not enough free space to download"), "\(message)")
                #expect(message.contains("12.0 MiB (12582912 bytes)"), "\(message)")
                #expect(message.contains("free"), "\(message)")
                let id = try #require(try await library.issue(named: "Big")?.assets.first?.id)
                #expect((library.bytesOnDisk(assetID: id) ?? 0) == 0, "no byte was written")
                #expect(server.requestCount("/big.pdf") == 1, "a shortfall is not retried")
                #expect(try await library.issue(named: "Small")?.status == .available)
            }
        }
    }

    @Test(.enabled(if: canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); not available here"))
    func anArchiveThatCannotFitIsNotUnpacked() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { fixtures in
                // A ZIP declaring 12 MiB in its central directory: refused before extraction starts.
                let declared = fixtures.path + "/declared.zip"
                try ArchiveFixtures.writeBomb(entryName: "zeros.bin", zeroBytes: 12 << 20, format: .zip, to: declared)
                // The same ZIP claiming 1 KiB (refused as corrupt at its first block past 1 KiB), and a
                // tar.gz (sizes known only while reading): stopped by the extraction itself, having filled nothing.
                let understated = fixtures.path + "/understated.zip"
                try ArchiveFixtures.writeBomb(
                    entryName: "zeros.bin", zeroBytes: 12 << 20, format: .zip, to: understated)
                try ArchiveFixtures.understateZipEntrySizes(at: understated, claimedSize: 1024)
                let tarball = fixtures.path + "/zeros.tar.gz"
                try ArchiveFixtures.writeBomb(
                    entryName: "zeros.bin", zeroBytes: 12 << 20, format: .tarGzip, to: tarball)
                for (path, file) in [
                    ("/declared.zip", declared), ("/understated.zip", understated), ("/zeros.tar.gz", tarball),
                ] {
                    server.serve(path, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                }
                try await Tmpfs.with(megabytes: 8) { mount in
                    let library = try await openLibrary(mount.appendingPathComponent("lib"))
                    for path in ["/declared.zip", "/understated.zip", "/zeros.tar.gz"] {
                        try await library.addIssue(
                            named: "Issue \(path)", date: IssueDate.today(),
                            assets: [AssetRequest(url: URL(string: server.url(path))!)])
                    }
                    let summary = try await library.download(options: DownloadOptions(jobs: 1))
                    try await library.shutdown()
                    #expect(summary.failed.count == 3, "\(summary)")
                    let declaredMessage = try await failure(library, "Issue /declared.zip")
                    #expect(declaredMessage.contains("not enough free space to unpack"), "\(declaredMessage)")
                    #expect(declaredMessage.contains("12.0 MiB (12582912 bytes)"), "\(declaredMessage)")
                    let understatedMessage = try await failure(library, "Issue /understated.zip")
                    #expect(understatedMessage.contains("Too much data"), "\(understatedMessage)")
                    let tarballMessage = try await failure(library, "Issue /zeros.tar.gz")
                    #expect(tarballMessage.contains("not enough free space"), "\(tarballMessage)")
                    // Nothing half-unpacked is left, and the archives wait to be unpacked when there is room.
                    let staging = library.layout.staging
                    let leftovers = try FileManager.default.contentsOfDirectory(atPath: staging).filter {
                        !$0.hasSuffix(".lock")
                    }
                    #expect(leftovers.isEmpty, "\(leftovers)")
                    for summary in try await library.summaries() {
                        #expect(
                            !FileManager.default.fileExists(
                                atPath: mount.path + "/lib/" + summary.folderName + "/zeros.bin"))
                    }
                }
            }
        }
    }
}
