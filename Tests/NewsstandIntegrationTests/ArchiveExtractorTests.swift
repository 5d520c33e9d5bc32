import Foundation
import Glibc
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandCore
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

// MARK: - Sandbox

/// A fresh temporary folder per test:
///
/// ```
/// <root>/                    /tmp/newsstand-archive-XXXXXX
///   outside/sentinel.txt     must never change
///   work/staging/            the (empty) staging folder; `../../x` from here is <root>/x
///   archive.<ext>            the fixture
/// ```
///
/// plus a unique absolute path `/tmp/newsstand-abs-<uuid>` that hostile archives aim at and that must never appear.
final class Sandbox: Sendable {
    let root: String
    let staging: String
    let outside: String
    let sentinel: String
    let absoluteTarget: String
    static let sentinelContent = Array("do not touch\n".utf8)

    init() throws {
        root = try makeTemporaryDirectory().path
        staging = root + "/work/staging"
        outside = root + "/outside"
        sentinel = outside + "/sentinel.txt"
        absoluteTarget = "/tmp/newsstand-abs-" + UUID().uuidString
        let files = FileManager.default
        try files.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try files.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data(Self.sentinelContent).write(to: URL(fileURLWithPath: sentinel))
    }

    deinit {
        try? Sandbox.removeTree(root)  // Cleanup: a test failure is reported elsewhere.
        try? Sandbox.removeTree(absoluteTarget)
    }

    func archive(_ format: ArchiveFormat) -> String {
        root + "/archive." + format.fileExtension
    }

    func path(_ relative: String) -> String {
        root + "/" + relative
    }

    /// `rm -rf` that never follows links and copes with folders without write permission.
    static func removeTree(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            chmod(path, 0o700)
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                try removeTree(path + "/" + name)
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// Everything about a file tree that an escape could change, keyed by path relative to the root. Folder times are
/// left out when `folderTimes` is false (moving entries in and out of a folder changes its mtime).
func snapshot(_ root: String, excluding excluded: String? = nil, folderTimes: Bool = true) -> [String: String] {
    var result: [String: String] = [:]
    func walk(_ path: String, _ relative: String) {
        if let excluded, path == excluded {
            return
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return
        }
        var description = "mode=\(String(info.st_mode, radix: 8)) links=\(info.st_nlink) size=\(info.st_size)"
        if folderTimes || info.st_mode & S_IFMT != S_IFDIR {
            description += " mtime=\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
        switch info.st_mode & S_IFMT {
        case S_IFLNK:
            description += " -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
        case S_IFREG:
            description +=
                " content=" + ((try? Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString()) ?? "?")
        case S_IFDIR:
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                walk(path + "/" + name, relative.isEmpty ? name : relative + "/" + name)
            }
        default:
            break
        }
        result[relative] = description
    }
    walk(root, "")
    return result
}

/// Where `path` really leads: each component is looked up on disk and symbolic links are followed (their targets
/// resolved from the folder they are in), the way the kernel would, except that missing components are kept
/// lexically. Independent of the code under test, as an oracle for "does this link point outside".
func physicalResolution(of path: String, hops: Int = 0) -> String {
    var current: [String] = []
    var pending = path.split(separator: "/").map(String.init)
    var hops = hops
    while !pending.isEmpty {
        let component = pending.removeFirst()
        if component == "." {
            continue
        }
        if component == ".." {
            _ = current.popLast()
            continue
        }
        let candidate = "/" + (current + [component]).joined(separator: "/")
        if hops < 40, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: candidate) {
            hops += 1
            let base = target.hasPrefix("/") ? [] : current
            current = []
            pending = base + target.split(separator: "/").map(String.init) + pending
            continue
        }
        current.append(component)
    }
    return "/" + current.joined(separator: "/")
}

/// Symbolic links below `root` that lead outside it.
func linksLeadingOutside(_ root: String) -> [String] {
    let realRoot = physicalResolution(of: root)
    var result: [String] = []
    for name in (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? [] {
        let path = root + "/" + name
        guard (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil else {
            continue
        }
        let resolved = physicalResolution(of: path)
        if resolved != realRoot && !resolved.hasPrefix(realRoot + "/") {
            result.append("\(name) -> \(resolved)")
        }
    }
    return result
}

/// A value shared between threads, guarded by a lock (`Synchronization.Mutex` needs macOS 15, which the package
/// does not require).
final class Locked<Value>: @unchecked Sendable {  // Every access to `value` holds `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&value) }
    }
}

func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

func fileStatus(_ path: String) -> stat? {
    var info = stat()
    return lstat(path, &info) == 0 ? info : nil
}

func contents(_ path: String) -> [UInt8]? {
    (try? Data(contentsOf: URL(fileURLWithPath: path))).map { Array($0) }
}

/// The process umask, read without changing it (`umask(2)` would race with parallel tests).
func currentUmask() -> UInt32 {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
        return UInt32(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) ?? 0o022
    }
    return 0o022
}

/// Total bytes and count of everything below `path`.
func treeUsage(_ path: String) -> (bytes: Int64, entries: Int) {
    var bytes: Int64 = 0
    var entries = 0
    for name in (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? [] {
        entries += 1
        if let info = fileStatus(path + "/" + name), info.st_mode & S_IFMT == S_IFREG {
            bytes += Int64(info.st_size)
        }
    }
    return (bytes, entries)
}

/// Where the central directory of a ZIP file starts, from its end record.
func zipCentralDirectoryOffset(_ path: String) throws -> Int {
    let bytes = try #require(contents(path))
    let end = try #require(
        (0...(bytes.count - 22)).reversed().first { bytes[$0..<($0 + 4)] == [0x50, 0x4B, 0x05, 0x06] })
    return (0..<4).reduce(0) { $0 | Int(bytes[end + 16 + $1]) << (8 * $1) }
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

// MARK: - Hostile corpus

/// One hostile archive and what must happen to it.
struct HostileCase: Sendable, CustomTestStringConvertible {
    var name: String
    var expected: ArchiveError.Kind
    var limits = UnpackLimits.default
    var format: ArchiveFormat
    /// Writes the archive at `sandbox.archive(format)`.
    var build: @Sendable (Sandbox, ArchiveFormat) throws -> Void
    /// Absolute paths that must not exist afterwards (besides the generic "nothing outside changed" check).
    var forbidden: @Sendable (Sandbox) -> [String] = { _ in [] }

    var testDescription: String {
        "\(name) (\(format))"
    }

    static func entries(
        _ name: String,
        _ expected: ArchiveError.Kind,
        _ format: ArchiveFormat,
        forbidden: @escaping @Sendable (Sandbox) -> [String] = { _ in [] },
        _ entries: @escaping @Sendable (Sandbox) -> [FixtureEntry]
    ) -> HostileCase {
        HostileCase(
            name: name,
            expected: expected,
            format: format,
            build: { sandbox, format in
                try ArchiveFixtures.write(entries(sandbox), format: format, to: sandbox.archive(format))
            },
            forbidden: forbidden
        )
    }

    static let pwned = Array("pwned\n".utf8)

    static let all: [HostileCase] = {
        var cases: [HostileCase] = []
        let evil: @Sendable (Sandbox) -> [String] = { [$0.path("evil.txt"), $0.path("work/evil.txt")] }
        for format in [ArchiveFormat.zip, .tar] {
            cases.append(
                .entries("zip-slip ../../evil.txt", .unsafeEntry, format, forbidden: evil) { _ in
                    [.file("../../evil.txt", pwned)]
                })
            cases.append(
                .entries("zip-slip after good entries", .unsafeEntry, format, forbidden: evil) { _ in
                    [.file("ok.txt", Array("fine".utf8)), .directory("docs"), .file("docs/../../../evil.txt", pwned)]
                })
            cases.append(
                .entries("absolute path", .unsafeEntry, format, forbidden: { [$0.absoluteTarget] }) { sandbox in
                    [.file(sandbox.absoluteTarget + "/abs.txt", pwned)]
                })
            cases.append(
                .entries(
                    "symlink to ../outside, then write through it", .unsafeEntry, format,
                    forbidden: {
                        [$0.outside + "/pwned.txt"]
                    }
                ) { _ in
                    [.symlink("link", target: "../../outside"), .file("link/pwned.txt", pwned)]
                })
            cases.append(
                .entries("symlink to an absolute path", .unsafeEntry, format) { sandbox in
                    [.symlink("link", target: sandbox.outside), .file("link/pwned.txt", pwned)]
                })
            cases.append(
                .entries("write through an inside symlink", .unsafeEntry, format) { _ in
                    [.directory("sub"), .symlink("link", target: "sub"), .file("link/pwned.txt", pwned)]
                })
            cases.append(
                .entries("symlink chain d -> . and e -> d/..", .unsafeEntry, format) { _ in
                    [.symlink("d", target: "."), .symlink("e", target: "d/..")]
                })
            cases.append(
                .entries("symlink climbing past the root", .unsafeEntry, format) { _ in
                    [.directory("a"), .symlink("a/b", target: "../../x")]
                })
            cases.append(
                .entries("backslash traversal", .unsafeEntry, format, forbidden: evil) { _ in
                    [.file("..\\..\\evil.txt", pwned)]
                })
            cases.append(
                .entries("control character in a name", .unsafeEntry, format) { _ in
                    [.file("bad\u{1B}[31mname.txt", pwned)]
                })
        }
        for format in [ArchiveFormat.tar, .tarGzip] {
            cases.append(
                .entries("hard link to /etc/passwd", .unsafeEntry, format) { _ in
                    [.hardlink("passwd", target: "/etc/passwd")]
                })
            cases.append(
                .entries("hard link to ../outside/sentinel, then write it", .unsafeEntry, format) { _ in
                    [.hardlink("s", target: "../../outside/sentinel.txt"), .file("s", pwned)]
                })
            cases.append(
                .entries("hard link to a symlink", .unsafeEntry, format) { _ in
                    [.directory("sub"), .symlink("sub/up", target: "../x"), .hardlink("h", target: "sub/up")]
                })
            cases.append(
                .entries("hard link through a symlink", .unsafeEntry, format) { _ in
                    [
                        .directory("sub"), .file("sub/f", pwned), .symlink("s", target: "sub"),
                        .hardlink("h", target: "s/f"),
                    ]
                })
            cases.append(
                .entries("character device", .unsupportedEntryType, format) { _ in
                    [.file("ok.txt", pwned), .characterDevice("null")]
                })
            cases.append(.entries("fifo", .unsupportedEntryType, format) { _ in [.fifo("pipe")] })
        }
        for encryption in ZipEncryption.allCases {
            cases.append(
                HostileCase(name: "encrypted entry (\(encryption))", expected: .encrypted, format: .zip) {
                    sandbox, format in
                    try ArchiveFixtures.writeEncryptedZip(
                        [.file("secret.txt", pwned)],
                        passphrase: "hunter2",
                        encryption: encryption,
                        to: sandbox.archive(format)
                    )
                })
        }
        let bombLimits = UnpackLimits(maxTotalBytes: 8 << 20, maxEntries: 1000)
        for format in [ArchiveFormat.zip, .tarGzip] {
            cases.append(
                HostileCase(
                    name: "64 MiB bomb, 8 MiB limit", expected: .limitExceeded, limits: bombLimits, format: format
                ) {
                    sandbox,
                    format in
                    try ArchiveFixtures.writeBomb(
                        entryName: "zeros.bin", zeroBytes: 64 << 20, format: format, to: sandbox.archive(format))
                })
        }
        cases.append(
            HostileCase(
                // libarchive cuts the file at the declared size and only warns; that warning is a failure,
                // so the bomb stops at its first block past 1 KiB, as a corrupt archive.
                name: "64 MiB bomb whose headers claim 1 KiB",
                expected: .corrupt,
                limits: bombLimits,
                format: .zip
            ) { sandbox, format in
                try ArchiveFixtures.writeBomb(
                    entryName: "zeros.bin", zeroBytes: 64 << 20, format: format, to: sandbox.archive(format))
                try ArchiveFixtures.understateZipEntrySizes(at: sandbox.archive(format), claimedSize: 1024)
            })
        cases.append(
            HostileCase(
                name: "more entries than allowed",
                expected: .limitExceeded,
                limits: UnpackLimits(maxTotalBytes: 1 << 30, maxEntries: 10),
                format: .zip
            ) { sandbox, format in
                try ArchiveFixtures.manySmallFiles(
                    count: 20, bytesEach: 10, format: format, to: sandbox.archive(format))
            })
        cases.append(
            HostileCase(name: "zip cut at its central directory", expected: .corrupt, format: .zip) { sandbox, format in
                let path = sandbox.archive(format)
                try ArchiveFixtures.manySmallFiles(count: 30, bytesEach: 100, format: format, to: path)
                try ArchiveFixtures.truncate(path, keepingBytes: try zipCentralDirectoryOffset(path))
            })
        cases.append(
            HostileCase(name: "zip cut inside its central directory", expected: .corrupt, format: .zip) {
                sandbox, format in
                let path = sandbox.archive(format)
                try ArchiveFixtures.manySmallFiles(count: 30, bytesEach: 100, format: format, to: path)
                try ArchiveFixtures.truncate(path, keepingBytes: try zipCentralDirectoryOffset(path) + 100)
            })
        cases.append(
            HostileCase(
                name: "zip holding a stored zip, cut inside its central directory", expected: .corrupt, format: .zip
            ) {
                sandbox,
                format in
                // Stored, so the inner ZIP's end record sits verbatim near the end of the cut file.
                let inner = sandbox.path("inner.zip")
                try ArchiveFixtures.write([.file("x.bin", randomBytes(30_000))], format: .zip, to: inner)
                let path = sandbox.archive(format)
                try ArchiveFixtures.write(
                    [.file("a.txt", Array("a".utf8)), .file("inner.zip", try #require(contents(inner)))],
                    format: format,
                    options: ["zip:compression=store"],
                    to: path
                )
                try ArchiveFixtures.truncate(path, keepingBytes: try zipCentralDirectoryOffset(path) + 10)
            })
        for format in [ArchiveFormat.zip, .tarGzip, .tar, .sevenZip, .tarXz] {
            cases.append(
                HostileCase(name: "cut in half", expected: .corrupt, format: format) { sandbox, format in
                    let path = sandbox.archive(format)
                    try ArchiveFixtures.write(
                        [.file("a.bin", randomBytes(40_000)), .file("b.bin", randomBytes(40_000))],
                        format: format,
                        to: path
                    )
                    let size = try #require(fileStatus(path)).st_size
                    try ArchiveFixtures.truncate(path, keepingBytes: Int(size) / 2)
                })
        }
        cases.append(
            HostileCase(name: "a damaged byte (bad CRC)", expected: .corrupt, format: .zip) { sandbox, format in
                // Random data is stored, not deflated, so the flipped byte changes only the CRC-32.
                let path = sandbox.archive(format)
                try ArchiveFixtures.write([.file("data.bin", randomBytes(20_000))], format: format, to: path)
                var bytes = try #require(contents(path))
                bytes[10_000] ^= 0xFF
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            })
        cases.append(
            HostileCase(name: "a PDF", expected: .notAnArchive, format: .zip) { sandbox, format in
                try Data("%PDF-1.4\n%âãÏÓ\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".utf8).write(
                    to: URL(fileURLWithPath: sandbox.archive(format)))
            })
        cases.append(
            HostileCase(name: "a lone gzip of text", expected: .notAnArchive, format: .tarGzip) { sandbox, format in
                try ArchiveFixtures.writeCompressed(
                    Array("just text\n".utf8), compression: .gzip, to: sandbox.archive(format))
            })
        cases.append(
            HostileCase(name: "an empty file", expected: .notAnArchive, format: .zip) { sandbox, format in
                try Data().write(to: URL(fileURLWithPath: sandbox.archive(format)))
            })
        return cases
    }()
}

// MARK: - Tests

@Suite("ArchiveExtractor", .timeLimit(.minutes(5)))
struct ArchiveExtractorTests {
    static let confinements: [ArchiveExtractor.Confinement] = [.threadWorkingDirectory, .absolutePathPrefix]

    @Test("hostile archives are refused and nothing escapes", arguments: HostileCase.all, confinements)
    func hostileArchiveIsRefused(_ hostile: HostileCase, confinement: ArchiveExtractor.Confinement) throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(hostile.format)
        try hostile.build(sandbox, hostile.format)
        let passwdBefore = fileStatus("/etc/passwd")
        let before = snapshot(sandbox.root, excluding: sandbox.staging)
        let workingDirectory = FileManager.default.currentDirectoryPath

        let extractor = ArchiveExtractor(limits: hostile.limits, confinement: confinement)
        let error = #expect(throws: ArchiveError.self) {
            try extractor.extract(archiveAt: archive, into: sandbox.staging)
        }
        #expect(error?.kind == hostile.expected, "\(error.map(String.init(describing:)) ?? "no error")")
        if let error {
            #expect(!error.description.contains("\n"))
            #expect(error.archivePath == archive)
        }

        // Nothing outside the staging folder changed, appeared or vanished.
        #expect(snapshot(sandbox.root, excluding: sandbox.staging) == before)
        #expect(contents(sandbox.sentinel) == Sandbox.sentinelContent)
        #expect(fileStatus(sandbox.sentinel)?.st_nlink == 1)
        #expect(fileStatus("/etc/passwd")?.st_nlink == passwdBefore?.st_nlink)
        #expect(!exists(sandbox.absoluteTarget))
        for path in hostile.forbidden(sandbox) {
            #expect(!exists(path), "\(path) was created")
        }
        // Inside the staging folder: never past the limits, no link pointing out.
        let usage = treeUsage(sandbox.staging)
        #expect(usage.bytes <= hostile.limits.maxTotalBytes)
        #expect(usage.entries <= hostile.limits.maxEntries)
        #expect(linksLeadingOutside(sandbox.staging) == [])
        #expect(FileManager.default.currentDirectoryPath == workingDirectory)
    }

    @Test("a nested ZIP with Unicode names, modes, times and links is extracted intact", arguments: confinements)
    func nestedZipWithUnicodeNames(confinement: ArchiveExtractor.Confinement) throws {
        let sandbox = try Sandbox()
        let archive = sandbox.path("issue.zip")
        let unicodeFile = Array("こんにちは\n".utf8)
        let entries: [FixtureEntry] = [
            .directory("Ünïcødé 東京"),
            .file("Ünïcødé 東京/ファイル.txt", unicodeFile),
            .file("a/b/c/deep.txt", Array("deep".utf8)),
            .file("bin/run.sh", Array("#!/bin/sh\n".utf8), mode: 0o755),
            .file("bin/setuid", Array("x".utf8), mode: 0o4755),
            .file("bin/sticky-setgid", Array("x".utf8), mode: 0o3775),
            .file("locked.txt", Array("no access".utf8), mode: 0o000),
            .file("old.txt", Array("old".utf8), mtime: 1_000_000_000),
            .directory("docs/v2"),
            .file("docs/v2/readme.txt", Array("v2".utf8)),
            .symlink("docs/latest", target: "v2/readme.txt"),
            .symlink("docs/v2/old", target: "../../old.txt"),
        ]
        try ArchiveFixtures.write(entries, format: .zip, to: archive)

        let summary = try ArchiveExtractor(confinement: confinement).extract(archiveAt: archive, into: sandbox.staging)

        #expect(summary.entries == entries.count)
        #expect(summary.bytes == Int64(unicodeFile.count + 4 + 10 + 1 + 1 + 9 + 3 + 2))
        if confinement == .threadWorkingDirectory {
            #expect(summary.warnings.isEmpty, "\(summary.warnings)")
        }
        let root = sandbox.staging
        #expect(contents(root + "/Ünïcødé 東京/ファイル.txt") == unicodeFile)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Ünïcødé 東京") == ["ファイル.txt"])
        #expect(contents(root + "/a/b/c/deep.txt") == Array("deep".utf8))
        let mask = currentUmask()
        #expect(try #require(fileStatus(root + "/bin/run.sh")).st_mode & 0o7777 == 0o755 & ~mask | 0o400)
        #expect(try #require(fileStatus(root + "/bin/setuid")).st_mode & 0o7777 == 0o755 & ~mask | 0o400)
        #expect(try #require(fileStatus(root + "/bin/sticky-setgid")).st_mode & 0o7000 == 0)
        #expect(try #require(fileStatus(root + "/locked.txt")).st_mode & 0o777 == 0o400)
        #expect(try #require(fileStatus(root + "/old.txt")).st_mtim.tv_sec == 1_000_000_000)
        #expect(
            try #require(fileStatus(root + "/Ünïcødé 東京")).st_mtim.tv_sec == ArchiveFixtures.defaultModificationTime
        )
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/docs/latest") == "v2/readme.txt")
        #expect(contents(root + "/docs/latest") == Array("v2".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/docs/v2/old") == "../../old.txt")
        #expect(contents(root + "/docs/v2/old") == Array("old".utf8))
        #expect(linksLeadingOutside(root) == [])
    }

    static let everyFormat: [ArchiveFormat] = [.zip, .tar, .tarGzip, .tarXz, .tarBzip2, .sevenZip]

    @Test("every format round-trips", arguments: everyFormat)
    func formatRoundTrips(_ format: ArchiveFormat) throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(format)
        let big = randomBytes(300_000)
        var entries: [FixtureEntry] = [
            .directory("issue"),
            .file("issue/page 1.pdf", big),
            .file("issue/東京.txt", Array("東京".utf8), mtime: 1_600_000_000),
            .file("issue/empty.txt", []),
            .symlink("issue/cover.pdf", target: "page 1.pdf"),
        ]
        if format != .zip && format != .sevenZip {
            entries.append(.hardlink("issue/copy.pdf", target: "issue/page 1.pdf"))
        }
        try ArchiveFixtures.write(entries, format: format, to: archive)
        #expect(ArchiveExtractor.isArchive(at: archive))

        let summary = try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)

        #expect(summary.entries == entries.count)
        let root = sandbox.staging + "/issue"
        #expect(contents(root + "/page 1.pdf") == big)
        #expect(contents(root + "/東京.txt") == Array("東京".utf8))
        #expect(try #require(fileStatus(root + "/東京.txt")).st_mtim.tv_sec == 1_600_000_000)
        #expect(contents(root + "/empty.txt") == [])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/cover.pdf") == "page 1.pdf")
        if format != .zip && format != .sevenZip {
            #expect(contents(root + "/copy.pdf") == big)
            #expect(try #require(fileStatus(root + "/copy.pdf")).st_nlink == 2)
        }
    }

    @Test("archives are detected by content, not by name")
    func detectsArchivesByContent() throws {
        let sandbox = try Sandbox()
        let entries: [FixtureEntry] = [.file("a.txt", Array("a".utf8))]
        for format in Self.everyFormat {
            let path = sandbox.path("archive-\(format.fileExtension).bin")
            try ArchiveFixtures.write(entries, format: format, to: path)
            #expect(ArchiveExtractor.isArchive(at: path), "\(format)")
        }
        let zip = sandbox.path("download.bin")
        try ArchiveFixtures.write(entries, format: .zip, to: zip)
        #expect(ArchiveExtractor.isArchive(at: zip))
        let summary = try ArchiveExtractor().extract(archiveAt: zip, into: sandbox.staging)
        #expect(summary.entries == 1)
        #expect(contents(sandbox.staging + "/a.txt") == Array("a".utf8))

        let notArchives: [(String, [UInt8])] = [
            (
                "issue.pdf",
                Array("%PDF-1.4\n%âãÏÓ\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer\n%%EOF\n".utf8)
            ),
            ("notes.zip", Array("Just some plain text, even though the name says zip.\n".utf8)),
            ("noise.tar", randomBytes(10_000)),
            ("empty.zip", []),
        ]
        for (name, bytes) in notArchives {
            let path = sandbox.path(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(!ArchiveExtractor.isArchive(at: path), "\(name)")
        }
        for compression in [StreamCompression.gzip, .xz, .bzip2] {
            let path = sandbox.path("text.\(compression)")
            try ArchiveFixtures.writeCompressed(Array("hello, world\n".utf8), compression: compression, to: path)
            #expect(!ArchiveExtractor.isArchive(at: path), "\(compression)")
        }
        #expect(!ArchiveExtractor.isArchive(at: sandbox.path("does-not-exist.zip")))
        #expect(!ArchiveExtractor.isArchive(at: sandbox.root))
    }

    /// Binary cpio has two bytes of magic, so one random file in 32,768 starts like it (one of the bench's 2,000
    /// random 64 KiB downloads did, and failed as a damaged archive). Such a file is plain; a real one is an archive.
    @Test func aFileThatOnlyStartsLikeBinaryCpioIsNoArchive() throws {
        let sandbox = try Sandbox()
        // `bsdtar --format bin -cf - a.txt` of "hello\n".
        let real: [UInt8] = [
            0xc7, 0x71, 0x00, 0xfe, 0x01, 0x00, 0xa4, 0x81, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x6b,
            0x3b, 0x21, 0x06, 0x00, 0x00, 0x00, 0x06, 0x00, 0x61, 0x2e, 0x74, 0x78, 0x74, 0x00, 0x68, 0x65, 0x6c, 0x6c,
            0x6f, 0x0a, 0xc7, 0x71, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x54, 0x52, 0x41, 0x49, 0x4c, 0x45, 0x52, 0x21,
            0x21, 0x21, 0x00, 0x00,
        ]
        let archive = sandbox.path("real.cpio")
        try Data(real).write(to: URL(fileURLWithPath: archive))
        #expect(ArchiveExtractor.isArchive(at: archive))
        let summary = try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)
        #expect(summary.entries == 1)
        #expect(contents(sandbox.staging + "/a.txt") == Array("hello\n".utf8))
        // The magic, then noise: a header of an unknown kind of file (mode 0o070000, the bench's file), and one of
        // a regular file declaring 4 GiB in a file of 64 KiB.
        var unknownKind = [UInt8](real.prefix(6)) + [0x00, 0x70] + randomBytes(65_536 - 8)
        // A 6-byte name and a 6-byte file, so that only the kind is wrong.
        for (offset, byte) in zip(20..<26, [UInt8]([0x06, 0x00, 0x00, 0x00, 0x06, 0x00])) { unknownKind[offset] = byte }
        var tooLarge = [UInt8](real.prefix(26)) + randomBytes(65_536 - 26)
        tooLarge[22] = 0xff
        tooLarge[23] = 0xff
        for (name, bytes) in [("unknown-kind.bin", unknownKind), ("too-large.bin", tooLarge)] {
            let path = sandbox.path(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(!ArchiveExtractor.isArchive(at: path), "\(name)")
        }
    }

    /// Text that libarchive's magic-less `mtree` reader takes for a list of files (each line a path): never an
    /// archive, and extracting it is refused rather than creating empty files named after its lines.
    @Test(
        "text files are never archives",
        arguments: [
            (
                "issues.csv",
                "id,date,pages,url\n1,2026-11-20,32,https://example.com/a.pdf\n2,2026-11-21,64,https://example.com/b.pdf\n"
            ),
            (
                "playlist.m3u",
                "#EXTM3U\n#EXTINF:1832,Episode 1\nhttps://cdn.example.com/ep1.mp3\n#EXTINF:1710,Episode 2\nhttps://cdn.example.com/ep2.mp3\n"
            ),
            ("urls.txt", "https://example.com/issues/2026-11-20.pdf\nhttps://example.com/issues/2026-11-21.pdf\n"),
            ("meta.json", "{\"name\":\"TheDaily\",\"date\":\"2026-11-20\",\"pages\":32}\n"),
            (
                "keys.b64",
                "a9f6B234F9vvhUMMbeQeIhHy88oAjmJ1H3zJ9J2ptrFgDqR/Y8pzZwC0YWV/\nQm9keSBvZiB0aGUgc2Vjb25kIGxpbmUgb2YgYmFzZTY0IHRleHQgaGVyZQ==\n"
            ),
        ])
    func textIsNeverAnArchive(name: String, text: String) throws {
        let sandbox = try Sandbox()
        let path = sandbox.path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(!ArchiveExtractor.isArchive(at: path))
        #expect(throws: ArchiveError.self) { try ArchiveExtractor().extract(archiveAt: path, into: sandbox.staging) }
        let written = (try? FileManager.default.subpathsOfDirectory(atPath: sandbox.staging)) ?? []
        #expect(written.isEmpty, "\(written)")
    }

    @Test("a tar with a ./ root entry and ./-prefixed names")
    func tarWithDotRoot() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.tar)
        try ArchiveFixtures.write(
            [
                .directory("./"), .file("./a.txt", Array("a".utf8)), .directory("./sub/"),
                .file("./sub//b.txt", Array("b".utf8)),
            ],
            format: .tar,
            to: archive
        )
        let summary = try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)
        #expect(summary.entries == 4)
        #expect(contents(sandbox.staging + "/a.txt") == Array("a".utf8))
        #expect(contents(sandbox.staging + "/sub/b.txt") == Array("b".utf8))
    }

    @Test("an archive exactly at the limits is extracted")
    func exactlyAtTheLimits() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.zip)
        try ArchiveFixtures.manySmallFiles(count: 10, bytesEach: 100, format: .zip, to: archive)
        // 10 files and the folder d000 that holds them: 11 objects.
        let limits = UnpackLimits(maxTotalBytes: 1000, maxEntries: 11)
        let summary = try ArchiveExtractor(limits: limits).extract(archiveAt: archive, into: sandbox.staging)
        #expect(summary.entries == 10)
        #expect(summary.bytes == 1000)

        let staging = sandbox.path("staging-2")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        let oneLess = UnpackLimits(maxTotalBytes: 1000, maxEntries: 10)
        let tooMany = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor(limits: oneLess).extract(archiveAt: archive, into: staging)
        }
        #expect(tooMany?.kind == .limitExceeded)

        let staging3 = sandbox.path("staging-3")
        try FileManager.default.createDirectory(atPath: staging3, withIntermediateDirectories: false)
        let oneByteLess = UnpackLimits(maxTotalBytes: 999, maxEntries: 11)
        let tooBig = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor(limits: oneByteLess).extract(archiveAt: archive, into: staging3)
        }
        #expect(tooBig?.kind == .limitExceeded)
    }

    @Test("folders created implicitly for deep paths count against the entry limit")
    func implicitFoldersCount() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.tar)
        let deep = (0..<50).map { "d\($0)" }.joined(separator: "/") + "/file.txt"
        try ArchiveFixtures.write([.file(deep, [1])], format: .tar, to: archive)
        let error = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor(limits: UnpackLimits(maxEntries: 20)).extract(
                archiveAt: archive, into: sandbox.staging)
        }
        #expect(error?.kind == .limitExceeded)
        #expect(treeUsage(sandbox.staging).entries == 0)
    }

    @Test("a later duplicate entry replaces an earlier one")
    func duplicateEntries() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.tar)
        try ArchiveFixtures.write(
            [.file("a.txt", Array("first".utf8)), .symlink("b", target: "a.txt"), .file("b", Array("second".utf8))],
            format: .tar,
            to: archive
        )
        _ = try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)
        #expect(contents(sandbox.staging + "/a.txt") == Array("first".utf8))
        #expect(contents(sandbox.staging + "/b") == Array("second".utf8))
        #expect(try #require(fileStatus(sandbox.staging + "/b")).st_mode & S_IFMT == S_IFREG)
    }

    @Test("the staging folder must exist and be empty")
    func stagingMustBeEmpty() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.zip)
        try ArchiveFixtures.write([.file("a.txt", [1])], format: .zip, to: archive)
        try Data([1]).write(to: URL(fileURLWithPath: sandbox.staging + "/leftover"))
        let notEmpty = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)
        }
        #expect(notEmpty?.kind == .io)
        let missing = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.path("nope"))
        }
        #expect(missing?.kind == .io)
        let noArchive = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor().extract(archiveAt: sandbox.path("missing.zip"), into: sandbox.outside)
        }
        #expect(noArchive?.kind == .io)
    }

    @Test("extraction leaves the process working directory and umask alone, even while it runs")
    func workingDirectoryUntouched() throws {
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.zip)
        try ArchiveFixtures.manySmallFiles(count: 3000, bytesEach: 64, format: .zip, to: archive)
        let before = FileManager.default.currentDirectoryPath
        let umaskBefore = currentUmask()

        // Watch the working directory from another thread for the whole extraction.
        let running = Locked(true)
        let finished = Locked(false)
        let seen = Locked(Set<String>())
        let watcher = Thread {
            while running.withLock({ $0 }) {
                let path = FileManager.default.currentDirectoryPath
                seen.withLock { _ = $0.insert(path) }
            }
            finished.withLock { $0 = true }
        }
        watcher.start()
        while seen.withLock({ $0.isEmpty }) {
            usleep(100)
        }
        let summary = try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)
        running.withLock { $0 = false }
        while !finished.withLock({ $0 }) {
            usleep(100)
        }

        #expect(summary.entries == 3000)
        #expect(!summary.warnings.contains { $0.contains("unshare") }, "unshare(CLONE_FS) is not available here")
        #expect(FileManager.default.currentDirectoryPath == before)
        #expect(seen.withLock { $0 } == [before])
        #expect(currentUmask() == umaskBefore)
    }

    @Test("concurrent extractions each stay in their own staging folder")
    func concurrentExtractions() throws {
        let sandbox = try Sandbox()
        let count = 4
        for index in 0..<count {
            let entries: [FixtureEntry] = (0..<300).map { .file("dir/\(index)-\($0).txt", Array("\(index)".utf8)) }
            try ArchiveFixtures.write(entries, format: .zip, to: sandbox.path("archive-\(index).zip"))
            try FileManager.default.createDirectory(
                atPath: sandbox.path("staging-\(index)"), withIntermediateDirectories: false)
        }
        let results = Locked<[Int: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let summary = try? ArchiveExtractor().extract(
                archiveAt: sandbox.path("archive-\(index).zip"),
                into: sandbox.path("staging-\(index)")
            )
            results.withLock { $0[index] = summary?.entries ?? -1 }
        }
        #expect(results.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, 300) }))
        for index in 0..<count {
            let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.path("staging-\(index)/dir"))
            #expect(names.count == 300)
            #expect(names.allSatisfy { $0.hasPrefix("\(index)-") })
        }
    }

    @Test("errors describe themselves on one line and name the entry")
    func errorDescription() throws {
        let error = ArchiveError(
            kind: .unsafeEntry,
            message: "the path has a '..' component",
            entryPath: "../\u{1B}[2Jevil\n.txt",
            archivePath: "/tmp/a.zip"
        )
        #expect(
            error.description
                == "unsafe archive entry '../\\u{1B}[2Jevil\\u{A}.txt' in '/tmp/a.zip': the path has a '..' component"
        )
        let sandbox = try Sandbox()
        let archive = sandbox.archive(.zip)
        try ArchiveFixtures.write([.file("../x", [1])], format: .zip, to: archive)
        let thrown = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor().extract(archiveAt: archive, into: sandbox.staging)
        }
        #expect(thrown?.entryPath == "../x")
        #expect(thrown?.description.hasPrefix("unsafe archive entry '../x' in '\(archive)': ") == true)
        let corrupt = sandbox.path("cut.tar.gz")
        try ArchiveFixtures.write([.file("a", randomBytes(50_000))], format: .tarGzip, to: corrupt)
        try ArchiveFixtures.truncate(corrupt, keepingBytes: 20_000)
        let truncated = #expect(throws: ArchiveError.self) {
            try ArchiveExtractor().extract(archiveAt: corrupt, into: sandbox.outside + "/../work/staging")
        }
        #expect(truncated?.kind == .corrupt)
        #expect(truncated?.libarchiveStatus == -30)  // ARCHIVE_FATAL, with libarchive's own words:
        #expect(truncated?.message.isEmpty == false)
    }

    // MARK: Merging

    static let mergeArchiveEntries: [FixtureEntry] = [
        .file("shared/new.txt", Array("new".utf8)),
        .file("replace.txt", Array("new version".utf8)),
        .file("fileToDir/inner.txt", Array("inner".utf8)),
        .file("dirToFile", Array("now a file".utf8)),
        .file("escape/inside.txt", Array("inside".utf8)),
        .file("linkdir/new.txt", Array("new".utf8)),
        .file("fresh/deep/a.txt", Array("a".utf8)),
        .file("Ünïcødé 東京/ファイル.txt", Array("東京".utf8)),
        .symlink("latest", target: "shared/new.txt"),
    ]

    /// A destination already holding another asset's files, and objects in the way of the staged ones: a file where
    /// a folder comes, a read-only folder where a file comes, and symlinks (one leading out) where folders come.
    func makeMergeDestination(_ sandbox: Sandbox) throws -> String {
        let destination = sandbox.path("work/issue")
        let files = FileManager.default
        try files.createDirectory(atPath: destination + "/other-asset", withIntermediateDirectories: true)
        try files.createDirectory(atPath: destination + "/shared", withIntermediateDirectories: true)
        try files.createDirectory(atPath: destination + "/dirToFile/sub", withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: destination + "/other-asset/keep.txt"))
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination + "/shared/old.txt"))
        try Data("old version".utf8).write(to: URL(fileURLWithPath: destination + "/replace.txt"))
        try Data("was a file".utf8).write(to: URL(fileURLWithPath: destination + "/fileToDir"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: destination + "/dirToFile/sub/x.txt"))
        chmod(destination + "/dirToFile/sub", 0o500)
        try files.createSymbolicLink(atPath: destination + "/escape", withDestinationPath: "../../outside")
        try files.createSymbolicLink(atPath: destination + "/linkdir", withDestinationPath: "other-asset")
        return destination
    }

    func extractMergeArchive(_ sandbox: Sandbox, into staging: String) throws {
        let archive = sandbox.archive(.zip)
        if !exists(archive) {
            try ArchiveFixtures.write(Self.mergeArchiveEntries, format: .zip, to: archive)
        }
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        _ = try ArchiveExtractor().extract(archiveAt: archive, into: staging)
    }

    @Test(
        "mergeStaging merges into existing content, replaces what is in the way, never follows links, and is idempotent"
    )
    func mergeStagingMergesAndIsIdempotent() throws {
        let sandbox = try Sandbox()
        let destination = try makeMergeDestination(sandbox)
        let outsideBefore = snapshot(sandbox.outside)
        let staging = sandbox.path("work/staging-1")
        try extractMergeArchive(sandbox, into: staging)

        try mergeStaging(staging, into: destination)

        #expect(!exists(staging))
        #expect(contents(destination + "/other-asset/keep.txt") == Array("keep".utf8))
        #expect(contents(destination + "/shared/old.txt") == Array("old".utf8))
        #expect(contents(destination + "/shared/new.txt") == Array("new".utf8))
        #expect(contents(destination + "/replace.txt") == Array("new version".utf8))
        #expect(contents(destination + "/fileToDir/inner.txt") == Array("inner".utf8))
        #expect(contents(destination + "/dirToFile") == Array("now a file".utf8))
        #expect(contents(destination + "/escape/inside.txt") == Array("inside".utf8))
        #expect(try #require(fileStatus(destination + "/escape")).st_mode & S_IFMT == S_IFDIR)
        #expect(contents(destination + "/linkdir/new.txt") == Array("new".utf8))
        #expect(!exists(destination + "/other-asset/new.txt"))
        #expect(contents(destination + "/fresh/deep/a.txt") == Array("a".utf8))
        #expect(contents(destination + "/Ünïcødé 東京/ファイル.txt") == Array("東京".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: destination + "/latest") == "shared/new.txt")
        #expect(snapshot(sandbox.outside) == outsideBefore)
        #expect(!exists(sandbox.outside + "/inside.txt"))
        let merged = snapshot(destination, folderTimes: false)

        // Again, with a freshly extracted staging folder: the same result.
        let again = sandbox.path("work/staging-2")
        try extractMergeArchive(sandbox, into: again)
        try mergeStaging(again, into: destination)
        #expect(!exists(again))
        #expect(snapshot(destination, folderTimes: false) == merged)

        // A crash part-way: some staged items already moved, a replaced file already unlinked. Re-extract, re-merge.
        let crashed = sandbox.path("work/staging-3")
        try extractMergeArchive(sandbox, into: crashed)
        try Sandbox.removeTree(destination + "/fresh")
        #expect(rename(crashed + "/fresh", destination + "/fresh") == 0)
        #expect(unlink(destination + "/replace.txt") == 0)
        try Sandbox.removeTree(destination + "/escape")
        try FileManager.default.createSymbolicLink(
            atPath: destination + "/escape", withDestinationPath: "../../outside")
        let retry = sandbox.path("work/staging-4")
        try Sandbox.removeTree(crashed)
        try extractMergeArchive(sandbox, into: retry)
        try mergeStaging(retry, into: destination)
        #expect(snapshot(destination, folderTimes: false) == merged)
        #expect(snapshot(sandbox.outside) == outsideBefore)
    }

    @Test("mergeStaging creates a missing destination folder")
    func mergeStagingCreatesDestination() throws {
        let sandbox = try Sandbox()
        let staging = sandbox.path("work/staging-1")
        try extractMergeArchive(sandbox, into: staging)
        let destination = sandbox.path("work/new-issue")
        try mergeStaging(staging, into: destination)
        #expect(contents(destination + "/fresh/deep/a.txt") == Array("a".utf8))
        #expect(!exists(staging))
    }

    // MARK: Path rules

    @Test(
        "unsafe paths are refused",
        arguments: [
            "", "/", "/etc/passwd", "..", "../x", "a/../../x", "a/..", "./../x", "a\u{0}b", "a\u{7F}", "tab\there",
            "..\\x", "a/..\\..\\x",
        ]
    )
    func unsafePath(_ path: String) {
        #expect(throws: EntryPathPolicy.Refusal.self) {
            try EntryPathPolicy.normalize(Array(path.utf8))
        }
    }

    @Test(
        "safe paths are normalised",
        arguments: [
            ("a.txt", "a.txt"), ("./a.txt", "a.txt"), ("a//b/./c", "a/b/c"), ("dir/", "dir"), ("./", ""),
            ("Ünïcødé 東京/ファイル.txt", "Ünïcødé 東京/ファイル.txt"), ("...", "..."), ("..a", "..a"), ("a\\b", "a\\b"),
        ]
    )
    func safePath(_ path: String, normalised: String) throws {
        let components = try EntryPathPolicy.normalize(Array(path.utf8))
        #expect(String(decoding: EntryPathPolicy.join(components), as: UTF8.self) == normalised)
    }

    @Test(
        "symbolic link targets",
        arguments: [
            ("x", 0, true), ("a/b", 0, true), ("../x", 1, true), ("../../x/y", 2, true), (".", 0, true),
            ("./x", 0, true),
            ("..", 0, false), ("../x", 0, false), ("../../x", 1, false), ("/etc", 3, false), ("a/../b", 3, false),
            ("d/..", 1, false), ("", 0, false), ("x\ny", 0, false), ("..\\..\\x", 5, false), ("a\\b", 0, true),
        ]
    )
    func symlinkTarget(_ target: String, depth: Int, allowed: Bool) {
        let refused = (try? EntryPathPolicy.checkSymlinkTarget(Array(target.utf8), linkDepth: depth)) == nil
        #expect(refused != allowed)
    }
}
