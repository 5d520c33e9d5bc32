internal import CSystemShims  // before CLibArchive: `struct stat` must belong to the shims (see shims.h)
internal import CLibArchive
import NewsstandCore

/// An error raised while inspecting, unpacking or merging an archive.
///
/// `description` is one line that reads well after `error: `, names the entry path and the archive when they
/// are known, and carries libarchive's own words where libarchive reported the failure. Every character taken
/// from the archive (entry paths are attacker-controlled) is escaped when it could break that line or fool a
/// terminal.
public struct ArchiveError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a small extensible set of codes (a struct around a private enum, so cases can be added
    /// without breaking exhaustive `switch`es in client code).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case unsafeEntry
            case unsupportedEntryType
            case encrypted
            case limitExceeded
            case corrupt
            case io
            case notAnArchive
            case insufficientSpace
        }

        private let code: Code

        private init(_ code: Code) {
            self.code = code
        }

        /// An entry would land, or link, outside the destination: a `..` component, an absolute path, a symlink or
        /// hardlink whose target escapes, a write through a symlink, a control character in a name.
        public static let unsafeEntry = Kind(.unsafeEntry)
        /// An entry is a character or block device, a FIFO or a socket; none of these belong in an issue.
        public static let unsupportedEntryType = Kind(.unsupportedEntryType)
        /// An entry's data or metadata is encrypted; issues never come with a passphrase.
        public static let encrypted = Kind(.encrypted)
        /// The archive holds more entries or more bytes than ``UnpackLimits`` allow (an archive bomb).
        public static let limitExceeded = Kind(.limitExceeded)
        /// libarchive could not read the archive: damaged, truncated or inconsistent.
        public static let corrupt = Kind(.corrupt)
        /// Reading the archive file or writing the extracted files failed (permissions, disk full, …).
        public static let io = Kind(.io)
        /// The file is not an archive format that is unpacked (a PDF, plain text, a lone compressed file, …).
        public static let notAnArchive = Kind(.notAnArchive)
        /// The unpacked content would not fit in the free space of the file system (a margin kept).
        public static let insufficientSpace = Kind(.insufficientSpace)

        /// A short phrase naming the kind, such as `unsafe archive entry`.
        public var description: String {
            switch code {
            case .unsafeEntry: "unsafe archive entry"
            case .unsupportedEntryType: "unsupported archive entry type"
            case .encrypted: "encrypted archive entry"
            case .limitExceeded: "archive unpack limit exceeded"
            case .corrupt: "corrupt or truncated archive"
            case .io: "cannot unpack archive"
            case .notAnArchive: "not an archive"
            case .insufficientSpace: "not enough free space"
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// Human-readable detail; libarchive's own words when libarchive reported the failure.
    public var message: String
    /// The path of the entry concerned, as stored in the archive, when there is one.
    public var entryPath: String?
    /// The archive file concerned, when there is one.
    public var archivePath: String?
    /// The libarchive status (`ARCHIVE_FATAL`, `ARCHIVE_FAILED`, `ARCHIVE_WARN`, …) when libarchive reported the
    /// failure.
    public var libarchiveStatus: Int32?
    /// `archive_errno()` when libarchive reported the failure: a system `errno`, or one of libarchive's own codes.
    public var libarchiveErrno: Int32?
    /// The system's `errno` when one of our own system calls failed (opening, listing, moving), else nil.
    public var errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: What went wrong.
    ///   - message: Human-readable detail.
    ///   - entryPath: The entry concerned, if any.
    ///   - archivePath: The archive file concerned, if any.
    ///   - libarchiveStatus: The libarchive status code, if libarchive reported the failure.
    ///   - libarchiveErrno: `archive_errno()`, if libarchive reported the failure.
    ///   - errno: The system's `errno`, if one of our own system calls failed.
    public init(
        kind: Kind,
        message: String,
        entryPath: String? = nil,
        archivePath: String? = nil,
        libarchiveStatus: Int32? = nil,
        libarchiveErrno: Int32? = nil,
        errno: Int32? = nil
    ) {
        self.kind = kind
        self.message = message
        self.entryPath = entryPath
        self.archivePath = archivePath
        self.libarchiveStatus = libarchiveStatus
        self.libarchiveErrno = libarchiveErrno
        self.errno = errno
    }

    /// An `.io` error for a failed system call: `message`, then the system's words for `code`, which is kept in
    /// ``errno`` (the archive side of ``POSIX``'s one path from `errno` to an error).
    static func system(
        _ code: Int32, _ message: String, entryPath: String? = nil, archivePath: String? = nil
    ) -> ArchiveError {
        ArchiveError(
            kind: .io, message: "\(message): \(POSIX.describe(code))", entryPath: entryPath,
            archivePath: archivePath, errno: code)
    }

    /// One line, for example `unsafe archive entry '../../evil.txt' in '/tmp/a.zip': path has a '..' component`.
    public var description: String {
        var text = kind.description
        if let entryPath {
            text += " '\(Self.displayable(entryPath))'"
        }
        if let archivePath {
            text += entryPath == nil ? " '\(Self.displayable(archivePath))'" : " in '\(Self.displayable(archivePath))'"
        }
        if !message.isEmpty {
            text += ": " + Self.displayable(message)
        }
        return text
    }

    static func displayable(_ text: String) -> String { TerminalText.escaped(text) }
}

extension ArchiveError: CustomDebugStringConvertible {
    /// The one-line description plus the libarchive status and errno, for logs.
    public var debugDescription: String {
        var text = description
        if let libarchiveStatus {
            text += " [libarchive status \(libarchiveStatus)"
            if let libarchiveErrno {
                text += ", errno \(libarchiveErrno)"
            }
            text += "]"
        }
        return text
    }
}

// MARK: - Return-code checking

/// The outcome of one libarchive call that did not throw: its value, and libarchive's words when it warned.
struct LibArchiveResult<Value: FixedWidthInteger> {
    /// The raw return value: `ARCHIVE_OK`, `ARCHIVE_EOF`, `ARCHIVE_WARN`, or a byte count.
    var value: Value
    /// libarchive's message when the call returned `ARCHIVE_WARN`.
    var warning: String?
}

/// Turns a libarchive return code into a value or a thrown ``ArchiveError``, in the manner of swift-system's
/// `valueOrErrno`: every libarchive call of the reader and the writer goes through here.
///
/// `ARCHIVE_OK`, `ARCHIVE_EOF` and non-negative counts are returned; `ARCHIVE_WARN` is returned together with
/// libarchive's message so the caller can collect it; `ARCHIVE_RETRY`, `ARCHIVE_FAILED`, `ARCHIVE_FATAL` and any
/// other negative value throw an error carrying `archive_error_string` (or `fallback` when that is NULL),
/// `archive_errno`, the status and the entry path.
///
/// - Parameters:
///   - code: What the C function returned.
///   - handle: The `struct archive *` the call was made on, to read its error state.
///   - kind: The error kind to throw for failures.
///   - operation: The C function's name, used in the fallback message.
///   - entryPath: The entry being processed, if any.
///   - archivePath: The archive file, if any.
/// - Returns: The value and any warning.
/// - Throws: ``ArchiveError`` of `kind` when `code` is a failure status.
func checkLibArchive<Value: FixedWidthInteger>(
    _ code: Value,
    handle: OpaquePointer,
    kind: ArchiveError.Kind,
    operation: StaticString,
    entryPath: String?,
    archivePath: String?
) throws(ArchiveError) -> LibArchiveResult<Value> {
    if code >= 0 {
        return LibArchiveResult(value: code, warning: nil)
    }
    let text = archive_error_string(handle).map { String(cString: $0) } ?? "\(operation) failed"
    if code == ARCHIVE_WARN {
        return LibArchiveResult(value: code, warning: text)
    }
    throw ArchiveError(
        kind: kind,
        message: text,
        entryPath: entryPath,
        archivePath: archivePath,
        libarchiveStatus: Int32(truncatingIfNeeded: code),
        libarchiveErrno: archive_errno(handle)
    )
}
