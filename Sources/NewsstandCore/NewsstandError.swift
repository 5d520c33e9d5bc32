/// The one error type the `Newsstand` library throws.
///
/// Modelled on AsyncHTTPClient's `HTTPClientError`: a `code` to match on (extensible without breaking
/// `switch`es), a `message` that names the issue, URL or file concerned, and the `underlying` cause.
/// `description` is a single line that reads well after `error: `; `localizedDescription` (through
/// `LocalizedError`) is the same line. The HTTP status and the `errno`, where a failure has one, are
/// kept as values so that callers can branch on them without parsing the text.
public struct NewsstandError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Compare with `==` against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case issueNotFound, duplicateIssue, invalidIssueName, invalidURL, invalidChecksum, invalidHeader
            case manifestUnreadable, manifestFromNewerVersion, libraryUnavailable, io
            case httpStatus, network, checksumMismatch, lengthMismatch, diskFull, tooManyRedirects
            case unsafeArchiveEntry, unpackFailed, cancelled, invalidImport, verifyFailed
            case invalidFeed, unsafeFeed, invalidMapping, subscriptionNotFound, duplicateSubscription
            case subscriptionGone, insufficientSpace, invalidConfiguration
            case invalidHooks
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// No issue has the given name.
        public static let issueNotFound = Code(.issueNotFound)
        /// An issue with that name already exists.
        public static let duplicateIssue = Code(.duplicateIssue)
        /// The issue name is empty, too long or holds control characters.
        public static let invalidIssueName = Code(.invalidIssueName)
        /// A URL is malformed or not http/https.
        public static let invalidURL = Code(.invalidURL)
        /// A `--sha256` value is not 64 hexadecimal digits.
        public static let invalidChecksum = Code(.invalidChecksum)
        /// A request header of an asset is malformed, or one the library sets itself (`Range`, `Host`, …).
        public static let invalidHeader = Code(.invalidHeader)
        /// `library.json` exists but cannot be parsed; it is left untouched.
        public static let manifestUnreadable = Code(.manifestUnreadable)
        /// `library.json` was written by a newer version of this library; it is left untouched.
        public static let manifestFromNewerVersion = Code(.manifestFromNewerVersion)
        /// The library folder cannot be created or opened.
        public static let libraryUnavailable = Code(.libraryUnavailable)
        /// A file-system operation failed.
        public static let io = Code(.io)
        /// The server answered with a status that does not allow the download (404, 403, …).
        public static let httpStatus = Code(.httpStatus)
        /// The connection failed and retries were exhausted.
        public static let network = Code(.network)
        /// The downloaded bytes do not match the expected SHA-256.
        public static let checksumMismatch = Code(.checksumMismatch)
        /// The server sent a different number of bytes than it announced.
        public static let lengthMismatch = Code(.lengthMismatch)
        /// The disk (or a file-size limit) is full.
        public static let diskFull = Code(.diskFull)
        /// Too many redirects, or a redirect loop.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// An archive entry would write outside the issue's folder, or is of a refused type.
        public static let unsafeArchiveEntry = Code(.unsafeArchiveEntry)
        /// An archive could not be unpacked (corrupt, encrypted, over the limits).
        public static let unpackFailed = Code(.unpackFailed)
        /// The operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// An import file is not JSON of issues (per-issue problems are in the import report instead).
        public static let invalidImport = Code(.invalidImport)
        /// `verify` found problems it did not repair.
        public static let verifyFailed = Code(.verifyFailed)
        /// A feed's body is not a feed this library reads (or is an HTML page without a feed link).
        public static let invalidFeed = Code(.invalidFeed)
        /// A feed was refused for safety: over the size cap, or XML that declares entities.
        public static let unsafeFeed = Code(.unsafeFeed)
        /// A `--map` file is not a valid mapping.
        public static let invalidMapping = Code(.invalidMapping)
        /// No subscription has the given name.
        public static let subscriptionNotFound = Code(.subscriptionNotFound)
        /// A subscription with that name or URL already exists.
        public static let duplicateSubscription = Code(.duplicateSubscription)
        /// The feed answered 410 Gone; the subscription was paused.
        public static let subscriptionGone = Code(.subscriptionGone)
        /// The file system has less free space than a transfer or an unpack needs.
        public static let insufficientSpace = Code(.insufficientSpace)
        /// A config file (the library's or the user's) that cannot be used; the message names the file and line.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The `hooks` section of the library's `config.json` cannot be used (the message names the file).
        public static let invalidHooks = Code(.invalidHooks)
    }

    /// What kind of failure this is.
    public var code: Code
    /// One line of text naming the issue, URL or file concerned.
    public var message: String
    /// The error that caused this one, if any.
    public var underlying: (any Error)?
    /// The system's `errno` when a system call failed (`ENOSPC`, `EACCES`, …), else nil.
    public var errno: Int32?
    /// The HTTP status when a server's answer caused the failure (404, 410, …), else nil.
    public var httpStatus: Int?
    /// How long the server asked to be left alone (`Retry-After` on the answer that failed), else nil: the
    /// scheduler's next check of a feed waits at least this long.
    package var retryAfter: Duration?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: One line naming what was wrong and the issue, URL or file concerned.
    ///   - underlying: The cause, if any.
    ///   - errno: The system's `errno`, when a system call failed.
    ///   - httpStatus: The HTTP status, when a server's answer caused the failure.
    public init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil, errno: Int32? = nil, httpStatus: Int? = nil
    ) {
        self.code = code
        // A URL's password never reaches an error line, whichever URL the caller put in the message.
        self.message = URLCredentials.redactSecrets(message)
        self.underlying = underlying
        self.errno = errno
        self.httpStatus = httpStatus
    }

    public var description: String { message }
}

// Foundation's `localizedDescription` otherwise reads "The operation could not be completed".
extension NewsstandError: LocalizedError {
    /// The same one line as ``description``.
    public var errorDescription: String? { message }
}

extension NewsstandError {
    /// Wraps a POSIX `errno` from a file operation on `path`, keeping the value in ``errno``.
    package static func posix(_ errnoValue: Int32, _ operation: String, path: String) -> NewsstandError {
        let code: Code = (errnoValue == ENOSPC || errnoValue == EFBIG || errnoValue == EDQUOT) ? .diskFull : .io
        return NewsstandError(code, "\(operation) \(path): \(POSIX.describe(errnoValue))", errno: errnoValue)
    }

    /// The one "no such issue" error: every command and API call that names an issue says it the same way.
    package static func issueNotFound(_ name: String, in root: String) -> NewsstandError {
        NewsstandError(.issueNotFound, "no issue named \(name.debugDescription) in \(root)")
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
