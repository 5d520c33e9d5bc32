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
        package var maxRedirects = 10
        /// A client to use instead of the engine's own; the engine never shuts it down.
        package var httpClient: HTTPClient?
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

        package init(retry: NewsstandCore.RetryPolicy = RetryPolicy(), connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60), stallLimit: NewsstandDownload.StallLimit? = .default, maxRedirects: Int = 10, httpClient: AsyncHTTPClient.HTTPClient? = nil, trustedCertificateFiles: [URL] = [], flushesToDisk: Bool = true, uncappedRate: Double = SegmentRamp.uncapped) {
            self.retry = retry
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.stallLimit = stallLimit
            self.maxRedirects = maxRedirects
            self.httpClient = httpClient
            self.trustedCertificateFiles = trustedCertificateFiles
            self.flushesToDisk = flushesToDisk
            self.uncappedRate = uncappedRate
        }
    }
}
