/// What a fixture archive is made of: its format, compression, encryption and entries.

/// An archive format ``ArchiveFixtures`` can write.
public enum ArchiveFormat: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ZIP with deflate.
    case zip
    /// POSIX tar (restricted pax: ustar plus pax headers for long or non-ASCII names), uncompressed.
    case tar
    /// Tar compressed with gzip.
    case tarGzip
    /// Tar compressed with xz.
    case tarXz
    /// Tar compressed with bzip2.
    case tarBzip2
    /// 7-Zip.
    case sevenZip

    /// A conventional file extension, such as `tar.gz` (tests show it in their names; content decides the format).
    public var fileExtension: String {
        switch self {
        case .zip: "zip"
        case .tar: "tar"
        case .tarGzip: "tar.gz"
        case .tarXz: "tar.xz"
        case .tarBzip2: "tar.bz2"
        case .sevenZip: "7z"
        }
    }

    public var description: String {
        fileExtension
    }
}

/// A single-stream compression for ``ArchiveFixtures/writeCompressed(_:compression:to:)``.
public enum StreamCompression: Sendable, Hashable {
    case gzip
    case xz
    case bzip2
}

/// The encryption of ``ArchiveFixtures/writeEncryptedZip(_:passphrase:encryption:to:)``.
public enum ZipEncryption: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Traditional PKWARE encryption (`zip:encryption=zipcrypt`).
    case zipCrypto
    /// WinZip AES-256 (`zip:encryption=aes256`); needs libarchive built with a crypto library (Debian's uses nettle).
    case aes256

    public var description: String {
        switch self {
        case .zipCrypto: "zipcrypt"
        case .aes256: "aes256"
        }
    }
}

/// One entry of a fixture archive. Paths and link targets are written exactly as given — `../x`, `/abs` and all —
/// since hostile archives are the point.
public enum FixtureEntry: Sendable, Hashable {
    /// A regular file with its content, permission bits (setuid etc. allowed) and modification time (seconds since
    /// 1970; `nil` means ``ArchiveFixtures/defaultModificationTime``).
    case file(String, [UInt8], mode: UInt32 = 0o644, mtime: Int? = nil)
    /// A directory, mode 0755.
    case directory(String)
    /// A symbolic link.
    case symlink(String, target: String)
    /// A hard link to `target` (tar formats only).
    case hardlink(String, target: String)
    /// A character device 1,3 (tar formats only).
    case characterDevice(String)
    /// A FIFO (tar formats only).
    case fifo(String)

    /// The entry's path.
    public var path: String {
        switch self {
        case .file(let path, _, _, _), .directory(let path), .symlink(let path, _), .hardlink(let path, _),
            .characterDevice(let path), .fifo(let path):
            path
        }
    }
}

/// A failure to write a fixture, with libarchive's words when it reported it.
public struct FixtureError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String

    public var description: String {
        message
    }
}
