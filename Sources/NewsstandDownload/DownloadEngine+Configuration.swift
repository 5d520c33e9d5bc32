import AsyncHTTPClient
import Foundation
import NewsstandCore

extension DownloadEngine {
    /// What the engine reads: its timeouts, retries, redirects, trust and client. ``Library/Configuration``
    /// embeds one and adds what belongs to the library (unpacking, flushing), so the engine never reads
    /// the library's settings.
    package struct Configuration: Sendable {
        package var retry = RetryPolicy()
        package var connectTimeout: Duration = .seconds(15)
        package var readTimeout: Duration = .seconds(60)
        /// Nil turns the stall limit off.
        package var stallLimit: StallLimit? = .default
        /// The longest a feed fetch may take, retries and redirects included (``fetchDocument(_:validators:maxBytes:headers:)``).
        package var documentDeadline: Duration = .seconds(300)
        package var maxRedirects = 10
        /// A client to use instead of the engine's own; the engine never shuts it down.
        package var httpClient: HTTPClient?
        /// Where the passwords taken out of URLs are kept (keyed by origin): each request to an origin it
        /// knows carries `Authorization: Basic`, and no other request does. Nil: only a URL's own
        /// `user:pass@` is used, and only for that URL's origin.
        package var credentials: CredentialStore?
        /// Request headers by host (lower-cased), sent with every request to that host, feeds and assets alike,
        /// unless the request has its own header of that name: a config file's `headers`.
        package var headersByHost: [String: [String: String]] = [:]
        /// PEM files of CA certificates trusted besides the system's store.
        package var trustedCertificateFiles: [URL] = []
        /// Whether completed files will be flushed to disk: then writeback starts as bytes land, so the flush
        /// finds little left. Without a flush, bytes stay in the page cache as with curl, and the kernel
        /// writes them back when it likes; kicking writeback would only make the download wait for the disk.
        package var flushesToDisk = true
        /// One connection at least this fast (bytes per second) is not capped: automatic segments leave it
        /// alone and `--segments` opens no more connections (``SegmentRamp``). Tests lower it, so that what
        /// they assert does not hang on how fast a loaded machine's loopback is.
        var uncappedRate = SegmentRamp.uncapped

        package init() {}
    }
}
