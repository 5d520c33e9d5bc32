import Foundation
import NewsstandTestSupport
import Testing

@testable import issues

/// `--max-unpacked-bytes` takes sizes with units; anything else is a usage error (exit 64).
@Suite(.timeLimit(.minutes(5))) struct ByteSizeTests {
    @Test(arguments: [
        ("1048576", Int64(1_048_576)), ("2K", 2048), ("500M", 500 << 20), ("16G", 16 << 30), ("1T", 1 << 40),
        ("16GiB", 16 << 30), ("10MB", 10_000_000), ("3kb", 3000), ("1.5K", 1536), ("512B", 512),
        ("9223372036854775807", Int64.max),
    ])
    func parses(text: String, bytes: Int64) {
        #expect(ByteSize(argument: text)?.bytes == bytes)
    }

    @Test(arguments: ["16X", "G", "", "1.5", "1e3", "-5", "8589934592G", "16 G", "0x10", "１６G"])
    func refuses(text: String) {
        #expect(ByteSize(argument: text) == nil)
    }

    /// An ETA past `Int.max` seconds (a rate of almost nothing) used to trap converting to `Int`.
    @Test(arguments: [9.3e18, 1e300, Double(Int.max), Double.greatestFiniteMagnitude])
    func durationSaturates(seconds: Double) {
        #expect(Format.duration(seconds: seconds) == "2562047788015215:30:07")  // Int.max seconds
    }

    @Test func helpShowsTheDefaultWithItsUnit() {
        #expect(ByteSize(bytes: 16 << 30).defaultValueDescription == "16G")
        #expect(ByteSize(bytes: 1000).description == "1000")
    }

    @Test(arguments: ["16X", "-5", "0", "1.5", "lots"])
    func badSizeIsAUsageError(text: String) async throws {
        try await withTemporaryDirectory { lib in
            let r = try CommandRunner.issues(["download", "--max-unpacked-bytes", text], library: lib)
            #expect(r.status == 64, "\(text): \(r.stderr)")
            #expect(r.stderr.contains("--max-unpacked-bytes"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }

    /// The unit reaches the unpacker: a 3000-byte entry is refused at 2K and unpacked at 4K.
    @Test func limitWithAUnitIsApplied() async throws {
        try await withTemporaryDirectory { fixtures in
            let zip = fixtures.appendingPathComponent("three-k.zip").path
            try ArchiveFixtures.write([.file("data.bin", patternBytes(count: 3000))], format: .zip, to: zip)
            try await withTestServer { server in
                server.serve("/three-k.zip", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zip))))
                try await withTemporaryDirectory { lib in
                    _ = try CommandRunner.issues(
                        ["add", "Small", "--date", "2026-11-20", "--asset", server.url("/three-k.zip")], library: lib)
                    let refused = try CommandRunner.issues(["download", "--max-unpacked-bytes", "2K"], library: lib)
                    #expect(refused.status == 1, "\(refused.stderr)")
                    #expect(refused.stderr.contains("cannot unpack"), "\(refused.stderr)")
                    let unpacked = try CommandRunner.issues(["download", "--max-unpacked-bytes", "4K"], library: lib)
                    #expect(unpacked.status == 0, "\(unpacked.stderr)")
                    #expect(FileManager.default.fileExists(atPath: lib.path + "/Small/data.bin"))
                }
            }
        }
    }
}
