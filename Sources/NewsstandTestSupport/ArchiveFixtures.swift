internal import CLibArchive
import Glibc

/// Writes test archives with libarchive's write API: ordinary, hostile (traversal, links, devices), encrypted,
/// bombs, truncated, and large. Blocking; each call is independent and safe from any thread.
public enum ArchiveFixtures {
    /// The modification time of entries that do not give one: 2024-01-01T00:00:00Z.
    public static let defaultModificationTime = 1_704_067_200

    /// Writes `entries`, in order, as an archive of `format`.
    ///
    /// - Parameters:
    ///   - entries: What to put in the archive.
    ///   - format: The archive format.
    ///   - options: libarchive writer options, such as `zip:compression=store` (see `archive_write_set_options`).
    ///   - path: Where to write it (replaced if it exists).
    /// - Throws: ``FixtureError``, e.g. for a device entry in a ZIP.
    public static func write(
        _ entries: [FixtureEntry],
        format: ArchiveFormat,
        options: [String] = [],
        to path: String
    ) throws {
        try withArchive(format: format, options: options, passphrase: nil, to: path) { archive in
            for entry in entries {
                try add(entry, to: archive, format: format)
            }
        }
    }

    /// Writes a ZIP whose file entries are encrypted with `passphrase`.
    ///
    /// - Parameters:
    ///   - entries: What to put in the archive.
    ///   - passphrase: The passphrase.
    ///   - encryption: The method; traditional ZipCrypto by default.
    ///   - path: Where to write it.
    /// - Throws: ``FixtureError``, e.g. when libarchive was built without the crypto support AES needs.
    public static func writeEncryptedZip(
        _ entries: [FixtureEntry],
        passphrase: String,
        encryption: ZipEncryption = .zipCrypto,
        to path: String
    ) throws {
        try withArchive(
            format: .zip,
            options: ["zip:encryption=\(encryption)"],
            passphrase: passphrase,
            to: path
        ) { archive in
            for entry in entries {
                try add(entry, to: archive, format: .zip)
            }
        }
    }

    /// Writes an archive with one file of `zeroBytes` zero bytes: compressed, a few kilobytes to decompress into
    /// gigabytes. The zeros are streamed from a 1 MiB buffer; `zeroBytes` is never allocated.
    ///
    /// - Parameters:
    ///   - entryName: The file's path.
    ///   - zeroBytes: Its size.
    ///   - format: The archive format.
    ///   - path: Where to write it.
    /// - Throws: ``FixtureError``.
    public static func writeBomb(entryName: String, zeroBytes: Int64, format: ArchiveFormat, to path: String) throws {
        try withArchive(format: format, options: [], passphrase: nil, to: path) { archive in
            let entry = try Entry(path: entryName)
            archive_entry_set_filetype(entry.pointer, CLIBARCHIVE_AE_IFREG)
            archive_entry_set_perm(entry.pointer, 0o644)
            archive_entry_set_size(entry.pointer, zeroBytes)
            archive_entry_set_mtime(entry.pointer, time_t(defaultModificationTime), 0)
            try check(archive_write_header(archive, entry.pointer), archive, "archive_write_header")
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            var left = zeroBytes
            while left > 0 {
                let count = Int(min(left, Int64(zeros.count)))
                try writeData(zeros[..<count], to: archive)
                left -= Int64(count)
            }
        }
    }

    /// Rewrites the uncompressed sizes recorded in a ZIP's central directory (and in local headers that record
    /// them) to `claimedSize`, so the archive understates how much its entries unpack to — a bomb that a check of
    /// declared sizes alone would let through. Only for ZIPs without ZIP64 records (entries under 4 GiB), such as
    /// those ``writeBomb(entryName:zeroBytes:format:to:)`` writes.
    ///
    /// - Parameters:
    ///   - path: The ZIP file, changed in place.
    ///   - claimedSize: The size to claim for every entry.
    /// - Throws: ``FixtureError`` when the file is not such a ZIP.
    public static func understateZipEntrySizes(at path: String, claimedSize: UInt32) throws {
        var bytes = try readFile(path)
        guard bytes.count >= 22,
            let end = (0...(bytes.count - 22)).reversed().first(where: {
                bytes[$0..<($0 + 4)] == [0x50, 0x4B, 0x05, 0x06]
            })
        else {
            throw FixtureError(message: "\(path): no ZIP end-of-central-directory record")
        }
        let count = Int(littleEndian16(bytes, end + 10))
        var position = Int(littleEndian32(bytes, end + 16))
        for _ in 0..<count {
            guard position + 46 <= bytes.count, bytes[position..<(position + 4)] == [0x50, 0x4B, 0x01, 0x02] else {
                throw FixtureError(message: "\(path): damaged central directory")
            }
            guard littleEndian32(bytes, position + 24) != 0xFFFF_FFFF else {
                throw FixtureError(message: "\(path): ZIP64 entries are not supported")
            }
            storeLittleEndian32(claimedSize, into: &bytes, at: position + 24)
            let local = Int(littleEndian32(bytes, position + 42))
            if local + 30 <= bytes.count, littleEndian32(bytes, local + 22) != 0 {
                storeLittleEndian32(claimedSize, into: &bytes, at: local + 22)
            }
            position +=
                46 + Int(littleEndian16(bytes, position + 28)) + Int(littleEndian16(bytes, position + 30))
                + Int(littleEndian16(bytes, position + 32))
        }
        try writeFile(bytes, to: path)
    }

    /// Writes `bytes` as a single compressed stream — a `.gz`, `.xz` or `.bz2` of one file, not an archive.
    ///
    /// - Parameters:
    ///   - bytes: The content.
    ///   - compression: The compression.
    ///   - path: Where to write it.
    /// - Throws: ``FixtureError``.
    public static func writeCompressed(_ bytes: [UInt8], compression: StreamCompression, to path: String) throws {
        try withUTF8Locale {
            guard let archive = archive_write_new() else {
                throw FixtureError(message: "archive_write_new failed")
            }
            defer { archive_write_free(archive) }
            try check(archive_write_set_format_raw(archive), archive, "archive_write_set_format_raw")
            switch compression {
            case .gzip: try check(archive_write_add_filter_gzip(archive), archive, "archive_write_add_filter_gzip")
            case .xz: try check(archive_write_add_filter_xz(archive), archive, "archive_write_add_filter_xz")
            case .bzip2: try check(archive_write_add_filter_bzip2(archive), archive, "archive_write_add_filter_bzip2")
            }
            try check(archive_write_open_filename(archive, path), archive, "archive_write_open_filename")
            let entry = try Entry(path: "data")
            archive_entry_set_filetype(entry.pointer, CLIBARCHIVE_AE_IFREG)
            archive_entry_set_size(entry.pointer, Int64(bytes.count))
            try check(archive_write_header(archive, entry.pointer), archive, "archive_write_header")
            try writeData(bytes[...], to: archive)
            try check(archive_write_close(archive), archive, "archive_write_close")
        }
    }

    /// Cuts a file down to its first `keepingBytes` bytes, as an interrupted download would leave it.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - keepingBytes: How many bytes to keep.
    /// - Throws: ``FixtureError`` with the system's reason.
    public static func truncate(_ path: String, keepingBytes: Int) throws {
        guard Glibc.truncate(path, off_t(keepingBytes)) == 0 else {
            throw FixtureError(message: "truncate \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes an archive of `count` files of `bytesEach` bytes, 100 to a folder (`d000/f00000.txt`, …), streamed
    /// without building the entry list in memory.
    ///
    /// - Parameters:
    ///   - count: How many files.
    ///   - bytesEach: The size of each.
    ///   - format: The archive format.
    ///   - path: Where to write it.
    /// - Throws: ``FixtureError``.
    public static func manySmallFiles(count: Int, bytesEach: Int, format: ArchiveFormat, to path: String) throws {
        try withArchive(format: format, options: [], passphrase: nil, to: path) { archive in
            for index in 0..<count {
                let name = "d\(padded(index / 100, 3))/f\(padded(index, 5)).txt"
                let line = Array("file \(index)\n".utf8)
                let content = (0..<bytesEach).map { line[$0 % line.count] }
                try add(.file(name, content), to: archive, format: format)
            }
        }
    }

    /// The names ``manySmallFiles(count:bytesEach:format:to:)`` gives its files, in order.
    public static func manySmallFileNames(count: Int) -> [String] {
        (0..<count).map { "d\(padded($0 / 100, 3))/f\(padded($0, 5)).txt" }
    }

    // MARK: - Writing

    private static func withArchive(
        format: ArchiveFormat,
        options: [String],
        passphrase: String?,
        to path: String,
        _ body: (OpaquePointer) throws -> Void
    ) throws {
        try withUTF8Locale {
            guard let archive = archive_write_new() else {
                throw FixtureError(message: "archive_write_new failed")
            }
            defer { archive_write_free(archive) }
            switch format {
            case .zip:
                try check(archive_write_set_format_zip(archive), archive, "archive_write_set_format_zip")
            case .tar, .tarGzip, .tarXz, .tarBzip2:
                try check(
                    archive_write_set_format_pax_restricted(archive), archive, "archive_write_set_format_pax_restricted"
                )
            case .sevenZip:
                try check(archive_write_set_format_7zip(archive), archive, "archive_write_set_format_7zip")
            }
            switch format {
            case .tarGzip: try check(archive_write_add_filter_gzip(archive), archive, "archive_write_add_filter_gzip")
            case .tarXz: try check(archive_write_add_filter_xz(archive), archive, "archive_write_add_filter_xz")
            case .tarBzip2:
                try check(archive_write_add_filter_bzip2(archive), archive, "archive_write_add_filter_bzip2")
            case .zip, .tar, .sevenZip: break
            }
            for option in options {
                try check(archive_write_set_options(archive, option), archive, "archive_write_set_options")
            }
            if let passphrase {
                try check(archive_write_set_passphrase(archive, passphrase), archive, "archive_write_set_passphrase")
            }
            try check(archive_write_open_filename(archive, path), archive, "archive_write_open_filename")
            try body(archive)
            try check(archive_write_close(archive), archive, "archive_write_close")
        }
    }

    private static func add(_ fixture: FixtureEntry, to archive: OpaquePointer, format: ArchiveFormat) throws {
        let entry = try Entry(path: fixture.path)
        let pointer = entry.pointer
        archive_entry_set_mtime(pointer, time_t(defaultModificationTime), 0)
        var data: [UInt8] = []
        switch fixture {
        case .file(_, let content, let mode, let mtime):
            archive_entry_set_filetype(pointer, CLIBARCHIVE_AE_IFREG)
            archive_entry_set_perm(pointer, mode_t(mode))
            archive_entry_set_size(pointer, Int64(content.count))
            archive_entry_set_mtime(pointer, time_t(mtime ?? defaultModificationTime), 0)
            data = content
        case .directory:
            archive_entry_set_filetype(pointer, CLIBARCHIVE_AE_IFDIR)
            archive_entry_set_perm(pointer, 0o755)
        case .symlink(_, let target):
            archive_entry_set_filetype(pointer, CLIBARCHIVE_AE_IFLNK)
            archive_entry_set_perm(pointer, 0o777)
            archive_entry_set_symlink_utf8(pointer, target)
        case .hardlink(_, let target):
            try requireTar(format, fixture)
            archive_entry_set_filetype(pointer, CLIBARCHIVE_AE_IFREG)
            archive_entry_set_perm(pointer, 0o644)
            archive_entry_set_hardlink_utf8(pointer, target)
            archive_entry_set_size(pointer, 0)
        case .characterDevice:
            try requireTar(format, fixture)
            archive_entry_set_filetype(pointer, CLIBARCHIVE_AE_IFCHR)
            archive_entry_set_perm(pointer, 0o666)
            archive_entry_set_rdevmajor(pointer, 1)
            archive_entry_set_rdevminor(pointer, 3)
        case .fifo:
            try requireTar(format, fixture)
            archive_entry_set_filetype(pointer, CLIBARCHIVE_AE_IFIFO)
            archive_entry_set_perm(pointer, 0o644)
        }
        try check(archive_write_header(archive, pointer), archive, "archive_write_header")
        if !data.isEmpty {
            try writeData(data[...], to: archive)
        }
    }

    private static func requireTar(_ format: ArchiveFormat, _ fixture: FixtureEntry) throws {
        guard format == .tar || format == .tarGzip || format == .tarXz || format == .tarBzip2 else {
            throw FixtureError(message: "\(format) archives cannot hold \(fixture)")
        }
    }

    private static func writeData(_ bytes: ArraySlice<UInt8>, to archive: OpaquePointer) throws {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                archive_write_data(archive, raw.baseAddress.map { $0 + written }, raw.count - written)
            }
            guard result > 0 else {
                try check(Int32(clamping: result), archive, "archive_write_data")
                throw FixtureError(message: "archive_write_data wrote nothing")
            }
            written += result
        }
    }

    /// Throws libarchive's message for a failure status; tolerates `ARCHIVE_WARN`.
    private static func check(_ status: Int32, _ archive: OpaquePointer, _ operation: String) throws {
        guard status < ARCHIVE_WARN else {
            return
        }
        let text = archive_error_string(archive).map { String(cString: $0) } ?? "failed"
        throw FixtureError(message: "\(operation): \(text)")
    }

    /// Runs `body` with this thread's locale switched to UTF-8, so that libarchive writes non-ASCII names intact
    /// (a Swift process runs in the "C" locale). Only the calling thread is affected, and only during the call.
    private static func withUTF8Locale(_ body: () throws -> Void) throws {
        guard let locale = clibarchive_new_utf8_locale() else {
            try body()
            return
        }
        let previous = uselocale(locale)
        defer {
            uselocale(previous)
            freelocale(locale)
        }
        try body()
    }

    // MARK: - Bytes

    private static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func littleEndian16(_ bytes: [UInt8], _ index: Int) -> UInt16 {
        UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    private static func littleEndian32(_ bytes: [UInt8], _ index: Int) -> UInt32 {
        UInt32(littleEndian16(bytes, index)) | UInt32(littleEndian16(bytes, index + 2)) << 16
    }

    private static func storeLittleEndian32(_ value: UInt32, into bytes: inout [UInt8], at index: Int) {
        for byte in 0..<4 {
            bytes[index + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(byte)))
        }
    }

    private static func readFile(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw FixtureError(message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 {
                break
            }
            result += buffer[..<count]
        }
        return result
    }

    private static func writeFile(_ bytes: [UInt8], to path: String) throws {
        guard let file = fopen(path, "wb") else {
            throw FixtureError(message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        guard fwrite(bytes, 1, bytes.count, file) == bytes.count else {
            throw FixtureError(message: "cannot write \(path)")
        }
    }
}

/// Owns one `struct archive_entry`.
private final class Entry {
    let pointer: OpaquePointer

    init(path: String) throws {
        guard let pointer = archive_entry_new() else {
            throw FixtureError(message: "archive_entry_new failed")
        }
        self.pointer = pointer
        archive_entry_set_pathname_utf8(pointer, path)
    }

    deinit {
        archive_entry_free(pointer)
    }
}
