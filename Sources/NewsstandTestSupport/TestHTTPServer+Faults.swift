/// Misbehaviour a ``TestHTTPServer`` injects for one path.
///
/// Every field defaults to "no fault", so `Faults()` (or ``Faults/none``) serves normally.
/// Counted faults (``unavailableResponses``, ``statusResponses``, ``cutResponses``) are consumed
/// per path in request order; ``TestHTTPServer/setFaults(_:_:)`` starts the count afresh.
///
/// When several faults apply they are checked in this order: ``unavailableResponses``,
/// ``status``, ``redirectTo``, then the normal response shaped by the remaining fields.
public struct Faults: Sendable, Equatable {
    /// Close the connection after sending this many body bytes of a response.
    ///
    /// Only responses whose body is longer than this are cut (a `HEAD`, or a body that is
    /// already short enough, does not use up one of ``cutResponses``). The bytes before the cut
    /// are handed to the kernel before the close, so the client reliably receives exactly this
    /// many body bytes and then sees the connection end early (curl: exit 18).
    public var cutAfterBytes: Int?
    /// How many responses get cut by ``cutAfterBytes``; `Int.max` cuts every response.
    public var cutResponses: Int
    /// Reset the connection (TCP RST, via `SO_LINGER` 0) instead of closing it with FIN when
    /// cutting. Unlike a FIN, a reset may discard bytes the client had not read yet, so the
    /// client can receive fewer than ``cutAfterBytes`` bytes (curl: exit 56).
    public var resetOnCut: Bool
    /// Answer 200 with the full body even when a `Range` is sent (and omit `Accept-Ranges`).
    public var ignoreRange: Bool
    /// The first N requests get `503 Service Unavailable`, later ones are served normally.
    public var unavailableResponses: Int
    /// `Retry-After` value sent with the 503s of ``unavailableResponses`` (e.g. `"1"`).
    public var retryAfter: String?
    /// Answer requests with this status and a short `text/plain` body (404, 403, 500, 416...).
    ///
    /// A 416 for in-memory content also carries `Content-Range: bytes */SIZE`.
    public var status: Int?
    /// How many requests get ``status``; `Int.max` (the default) means all of them.
    public var statusResponses: Int
    /// Throttle bodies to about this many bytes per second (small chunks sent on a schedule).
    public var bytesPerSecond: Int?
    /// Send the full `Content-Length` but only this many body bytes, then close (every response).
    public var truncateAfterBytes: Int?
    /// Send the full `Content-Length` but only this many body bytes, then send nothing more and keep the
    /// connection open until the client leaves (a server that stalls mid-body, on every response): a test
    /// that must catch a transfer in the middle does so however late it looks.
    public var holdAfterBytes: Int?
    /// Answer every request with a redirect to this absolute URL or path.
    public var redirectTo: String?
    /// Status used for ``redirectTo`` (302 unless changed: 301, 303, 307, 308...).
    public var redirectStatus: Int
    /// Send neither `ETag` nor `Last-Modified` (so `If-Range` can never match).
    public var omitValidators: Bool
    /// Send the body with `Transfer-Encoding: chunked` instead of `Content-Length`.
    public var omitContentLength: Bool
    /// `Content-Disposition` header to add to normal responses.
    public var contentDisposition: String?
    /// More headers for normal and 304 responses (`Cache-Control`, `Expires`), by name.
    public var extraHeaders: [String: String] = [:]
    /// Send the ETag as `W/"..."`; a weak ETag never satisfies `If-Range`.
    public var weakETag: Bool
    /// Send `Last-Modified` but no `ETag`, so `If-Range` carries a date.
    public var omitETag: Bool
    /// Answer a `Range` with 206 even when `If-Range` no longer holds, as a broken cache or proxy does.
    public var ignoreIfRange: Bool
    /// Honour `Range` on only this many requests that carry one, then answer the later ones as
    /// ``ignoreRange`` does (a server, or a node behind one name, that stops honouring ranges).
    public var honourRangeRequests: Int?

    /// Creates a fault set; every default means "behave normally".
    public init(
        cutAfterBytes: Int? = nil,
        cutResponses: Int = 1,
        resetOnCut: Bool = false,
        ignoreRange: Bool = false,
        unavailableResponses: Int = 0,
        retryAfter: String? = nil,
        status: Int? = nil,
        statusResponses: Int = .max,
        bytesPerSecond: Int? = nil,
        truncateAfterBytes: Int? = nil,
        holdAfterBytes: Int? = nil,
        redirectTo: String? = nil,
        redirectStatus: Int = 302,
        omitValidators: Bool = false,
        omitContentLength: Bool = false,
        contentDisposition: String? = nil,
        weakETag: Bool = false,
        omitETag: Bool = false,
        ignoreIfRange: Bool = false,
        honourRangeRequests: Int? = nil
    ) {
        self.cutAfterBytes = cutAfterBytes
        self.cutResponses = cutResponses
        self.resetOnCut = resetOnCut
        self.ignoreRange = ignoreRange
        self.unavailableResponses = unavailableResponses
        self.retryAfter = retryAfter
        self.status = status
        self.statusResponses = statusResponses
        self.bytesPerSecond = bytesPerSecond
        self.truncateAfterBytes = truncateAfterBytes
        self.holdAfterBytes = holdAfterBytes
        self.redirectTo = redirectTo
        self.redirectStatus = redirectStatus
        self.omitValidators = omitValidators
        self.omitContentLength = omitContentLength
        self.contentDisposition = contentDisposition
        self.weakETag = weakETag
        self.omitETag = omitETag
        self.ignoreIfRange = ignoreIfRange
        self.honourRangeRequests = honourRangeRequests
    }

    /// No fault at all.
    public static let none = Faults()
}

/// How far a path's counted faults have been used up.
struct FaultProgress: Sendable {
    var unavailableSent = 0
    var statusSent = 0
    var cutsDone = 0
    var rangedRequests = 0
}
