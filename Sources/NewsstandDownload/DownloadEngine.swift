import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization
import NewsstandCore

/// Fetches one asset into its partial file, resuming, retrying and verifying: the HTTP half of a download.
/// One engine (and one `HTTPClient` per proxy setting) serves every download of a library.
package final class DownloadEngine: Sendable {
    struct Job: Sendable {
        var assetID: String
        var url: URL
        var sha256: String?
        /// The asset's own request headers, sent on every request of it (see ``hopHeaders(_:adding:from:to:)``).
        var headers: [String: String] = [:]
        var partialPath: String
        var recordPath: String
        /// The run's bandwidth budget, shared by every transfer of the run.
        var rateLimiter: RateLimiter? = nil
        /// Connections to fetch a large asset over in byte ranges: a number asked for (1: one connection),
        /// or nil for the automatic choice (see ``DownloadOptions/segments``).
        var segments: Int? = 1
    }

    struct Result: Sendable {
        var size: Int64
        var record: ResumeRecord?
        var bytesFetched: Int64
    }

    enum Progress: Sendable {
        case started(resumingFrom: Int64, expected: Int64?)
        case bytes(received: Int64, expected: Int64?, bytesPerSecond: Double)
        case retrying(attempt: Int, delay: Duration, reason: String)
    }

    /// How one request reaches its server.
    enum Route: Sendable, Hashable {
        /// Plain http (or a scheme AsyncHTTPClient refuses) straight to the server.
        case direct
        /// https straight to the server.
        case directTLS
        /// https through a proxy: a `CONNECT` tunnel (AHC's own proxy support), TLS inside it.
        case tunnel(ProxySettings.Proxy)
        /// Plain http through a proxy: the request itself goes to the proxy, in absolute form.
        case forward(ProxySettings.Proxy)

        var proxy: ProxySettings.Proxy? {
            switch self {
            case .direct, .directTLS: return nil
            case .tunnel(let proxy), .forward(let proxy): return proxy
            }
        }

        /// Whether its connections speak TLS, and so need the trust roots loaded.
        var usesTLS: Bool {
            switch self {
            case .directTLS, .tunnel: return true
            case .direct, .forward: return false
            }
        }
    }

    let configuration: Configuration
    let logger: Logger
    let environment: [String: String]
    let proxies: ProxySettings
    let ownedClients: Mutex<[ClientKey: HTTPClient]>
    /// The TLS configuration with the extra trust roots, read once, on the first client made.
    let tls: Mutex<TLSConfiguration?>
    let injected: HTTPClient?

    package init(
        configuration: Configuration, logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.configuration = configuration
        self.logger = logger
        self.environment = environment
        self.proxies = ProxySettings.fromEnvironment(environment)
        self.injected = configuration.httpClient
        self.ownedClients = Mutex([:])
        self.tls = Mutex(nil)
    }

    package func shutdown() async throws {
        let clients = ownedClients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in clients { try await client.shutdown() }
    }

    // A library dropped without `shutdown()` drops its engine: AsyncHTTPClient traps in debug builds when a
    // client that was not shut down is deinitialised, so the engine shuts its own clients down here. The
    // callback form keeps each client alive until its shutdown has finished (a shut-down client deinits
    // quietly), and needs nothing from this object.
    deinit {
        let clients = ownedClients.withLock { Array($0.values) }
        guard !clients.isEmpty else { return }
        let logger = self.logger
        logger.debug("shutting down \(clients.count) HTTP client(s) of a library dropped without shutdown()")
        for client in clients {
            client.shutdown { error in
                logger.debug(
                    "HTTP client of a dropped library shut down",
                    metadata: error.map { ["error": "\($0)"] } ?? [:])
            }
        }
    }

    /// Downloads `job` into its partial file until the whole body is there, retrying transient failures.
    /// - Throws: `NewsstandError` for permanent failures, `CancellationError` when cancelled.
    func fetch(_ job: Job, progress: @escaping @Sendable (Progress) -> Void) async throws -> Result {
        // A segment plan on disk is always continued in segments (its partial file has holes); otherwise
        // segments are tried when asked for, and anything they cannot use falls back to one connection here.
        if (job.segments ?? 1) > 1 || ResumeRecord.load(job.recordPath)?.segments != nil,
            let result = try await fetchSegmented(job, progress: progress)
        {
            return result
        }
        let hashing = job.sha256 != nil
        let flushed = configuration.flushesToDisk
        let sink = try await runBlocking {
            try FileSink(path: job.partialPath, recordPath: job.recordPath, hashing: hashing, startsWriteback: flushed)
        }
        let startSize = sink.size
        // Automatic segments: the first response of a fresh download may turn into a segment plan.
        // Not under a run's rate limit below the uncapped rate: the limit itself would look like a server's cap,
        // and more connections would share the same budget.
        let limited = job.rateLimiter.map { Double($0.bytesPerSecond) < configuration.uncappedRate } ?? false
        var splitAbove = job.segments == nil && startSize == 0 && !limited ? SegmentPlan.automaticThreshold : nil
        var failuresWithoutProgress = 0
        // Progress means reaching further than ever before; re-fetching bytes after a restart is not.
        var furthest = startSize
        var fetched: Int64 = 0
        let started = ContinuousClock.now
        while true {
            try Task.checkCancellation()
            var record = ResumeRecord.load(job.recordPath)
            var offset = sink.size
            // Bytes whose origin cannot be proven (no validator to send in If-Range) are never appended to.
            if offset > 0, record?.ifRangeValidator == nil || (record?.expectedBytes.map { offset > $0 } ?? false) {
                try await runBlocking { try sink.truncateNow() }
                offset = 0
                record = nil
            }
            let throttle = ProgressThrottle(start: started, baseline: startSize, bodyStart: offset)
            var attempt = Attempt(
                job: job, sink: sink, offset: offset, validator: offset > 0 ? record?.ifRangeValidator : nil,
                splitAbove: offset == 0 ? splitAbove : nil, throttle: throttle, progress: progress,
                uncappedRate: configuration.uncappedRate)
            do {
                let outcome = try await follow(&attempt)
                let (size, digest) = try await sink.drain()
                let fetchedNow = fetched + attempt.delegate.receivedBytes
                let finished = try completedRecord(of: outcome, size: size, digest: digest, record: record, attempt: attempt)
                progress(.bytes(received: size, expected: size, bytesPerSecond: throttle.finalRate(total: size)))
                return Result(size: size, record: finished, bytesFetched: fetchedNow)
            } catch let offer as SplitOffer {
                // The first response's connection is capped: its bytes stay, and the rest goes on in segments, or
                // (if they cannot be used) on this one connection from where it stopped.
                splitAbove = nil
                fetched += attempt.delegate.receivedBytes
                let kept = try await sink.drain().size
                let probe = Probe(target: attempt.hop, version: offer.version)
                if var result = try await fetchSegmented(job, known: probe, keeping: kept, progress: progress) {
                    result.bytesFetched += fetched
                    return result
                }
            } catch is CancellationError {
                // Let queued writes land before the asset lock is released, so nobody else's bytes follow them.
                _ = try? await sink.drain()
                throw CancellationError()
            } catch let error as NewsstandError where error.code == .checksumMismatch {
                try? await runBlocking {
                    try POSIX.unlinkIfPresent(job.partialPath)
                    try POSIX.unlinkIfPresent(job.recordPath)
                }
                throw error
            } catch {
                fetched += attempt.delegate.receivedBytes
                let drained = try? await sink.drain()
                if Task.isCancelled { throw CancellationError() }
                let classified = await DownloadEngine.classifyExplained(error, url: job.url, hop: attempt.hop)
                guard classified.isTransient else { throw classified.error }
                if let mismatch = error as? RangeMismatch {
                    logger.debug("restarting \(job.url.absoluteString) from zero: \(mismatch.reason)")
                    try await runBlocking { try sink.truncateNow() }
                }
                let reached = drained?.size ?? sink.size
                // A stalled attempt is a failed one even if it trickled a few new bytes.
                let madeProgress = reached > furthest && !(error is StallFailure)
                furthest = max(furthest, reached)
                try await backOff(
                    after: classified, of: error, madeProgress: madeProgress, failures: &failuresWithoutProgress,
                    progress: progress)
            }
        }
    }

    /// One attempt on one connection: the request's headers (a resume sends `Range` and `If-Range`), the hop
    /// being fetched (so that a failure names the host and proxy it happened with) and its response delegate,
    /// made anew for each redirect.
    struct Attempt {
        let job: Job
        let offset: Int64
        let validator: String?
        var hop: Hop
        var delegate: ResponseDelegate
        /// A fresh delegate for the attempt's bytes: one per hop, since a redirect's body starts over.
        private let makeDelegate: () -> ResponseDelegate

        init(
            job: Job, sink: FileSink, offset: Int64, validator: String?, splitAbove: Int64?, throttle: ProgressThrottle,
            progress: @escaping @Sendable (Progress) -> Void, uncappedRate: Double
        ) {
            self.job = job
            self.offset = offset
            self.validator = validator
            hop = Hop(url: job.url, route: .direct)
            makeDelegate = {
                ResponseDelegate(
                    sink: sink, requestedOffset: offset, sentValidator: validator, url: job.url,
                    splitAbove: splitAbove, uncappedRate: uncappedRate,
                    onStart: { from, expected in
                        throttle.bodyStart.withLock { $0 = from }
                        progress(.started(resumingFrom: from, expected: expected))
                    },
                    onProgress: { received, expected in
                        let total = throttle.bodyStart.withLock { $0 } + received
                        if let rate = throttle.shouldReport(total: total) {
                            progress(.bytes(received: total, expected: expected, bytesPerSecond: rate))
                        }
                    },
                    rateLimiter: job.rateLimiter
                )
            }
            delegate = makeDelegate()
        }

        var headers: HTTPHeaders {
            var headers = DownloadEngine.baseHeaders
            if let validator {
                headers.add(name: "Range", value: "bytes=\(offset)-")
                headers.add(name: "If-Range", value: validator)
            }
            return headers
        }

        /// Follows a redirect to `url`: a new hop and a fresh delegate.
        mutating func redirect(to url: URL) {
            hop.url = url
            delegate = makeDelegate()
        }
    }

    /// Sends the attempt's request and follows its redirects, each hop on the route its own URL calls for.
    /// Range and If-Range go along: the validator still names the bytes on disk.
    /// - Returns: The last hop's outcome (never a redirect).
    private func follow(_ attempt: inout Attempt) async throws -> AttemptOutcome {
        let job = attempt.job
        var visited: Set<String> = [job.url.absoluteString]
        while true {
            attempt.hop.route = try route(for: attempt.hop.url)
            let request = try request(
                for: attempt.hop.url, route: attempt.hop.route,
                headers: DownloadEngine.hopHeaders(attempt.headers, adding: job.headers, from: job.url, to: attempt.hop.url))
            let current = attempt.delegate
            let outcome = try await execute(
                request, delegate: current, route: attempt.hop.route, received: { current.receivedBytes },
                held: { current.limiterHeld })
            guard case .redirect(let location) = outcome else { return outcome }
            guard let next = URL(string: location, relativeTo: attempt.hop.url)?.absoluteURL,
                ["http", "https"].contains(next.scheme?.lowercased() ?? "")
            else {
                throw NewsstandError(.invalidURL, "\(job.url.absoluteString) redirected to an unusable URL: \(location)")
            }
            guard visited.count <= configuration.maxRedirects, visited.insert(next.absoluteString).inserted else {
                throw NewsstandError(.tooManyRedirects, "\(job.url.absoluteString): too many redirects or a redirect loop")
            }
            attempt.redirect(to: next)
        }
    }

    /// What a finished attempt's outcome means once its bytes have landed (`size`, and `digest` when hashed).
    /// - Returns: The resume record of the complete file.
    /// - Throws: `lengthMismatch`, `checksumMismatch`, or ``RangeMismatch`` to start over from zero.
    private func completedRecord(
        of outcome: AttemptOutcome, size: Int64, digest: String?, record: ResumeRecord?, attempt: Attempt
    ) throws -> ResumeRecord? {
        let job = attempt.job
        switch outcome {
        case .body(let expected):
            if let expected, size != expected {
                throw NewsstandError(.lengthMismatch, "\(job.url.absoluteString) sent \(size) of \(expected) bytes")
            }
            try verify(job, digest: digest)
            return ResumeRecord.load(job.recordPath)
        case .rangeNotSatisfiable(let total):
            // Complete only if an earlier 200/206 announced exactly the bytes on disk: a `bytes */N`
            // naming what we hold after a cut proves nothing, so it never overrides the recorded length.
            if attempt.offset > 0, let known = record?.expectedBytes, known == attempt.offset, (total ?? known) == known {
                try verify(job, digest: digest)
                return record
            }
            // Our bytes do not fit the resource any more: start over (the caller truncates).
            throw RangeMismatch(reason: "the server refused the range from byte \(attempt.offset) (416)")
        case .redirect(let location):
            // Not reached: ``follow(_:)`` follows every redirect.
            throw NewsstandError(
                .tooManyRedirects, "\(job.url.absoluteString): the redirect to \(location) was not followed")
        }
    }

    /// After a transient failure of an attempt (or of one range): gives up once the attempts in a row
    /// without progress reach the retry budget, else reports the retry and waits its backoff.
    /// - Throws: The final error, naming the attempts; `CancellationError` while waiting.
    func backOff(
        after classified: Classified, of error: any Error, madeProgress: Bool, failures: inout Int,
        progress: @Sendable (Progress) -> Void
    ) async throws {
        failures = madeProgress ? 0 : failures + 1
        if failures >= configuration.retry.maxAttemptsWithoutProgress {
            throw NewsstandError(
                classified.error.code, "\(classified.error.message) (gave up after \(failures) attempts without progress)",
                underlying: error, errno: classified.error.errno, httpStatus: classified.error.httpStatus)
        }
        let delay = configuration.retry.delay(
            attempt: max(failures, 1), retryAfter: classified.retryAfter, madeProgress: madeProgress)
        logger.debug("retry \(failures) in \(delay): \(classified.error.message)")
        progress(.retrying(attempt: failures, delay: delay, reason: classified.error.message))
        try await Task.sleep(for: delay)
    }

    func verify(_ job: Job, digest: String?) throws {
        guard let expected = job.sha256 else { return }
        guard let digest, digest == expected.lowercased() else {
            throw NewsstandError(
                .checksumMismatch,
                "\(job.url.absoluteString) has SHA-256 \(digest ?? "unknown"), expected \(expected); the bad file was deleted"
            )
        }
    }

    /// One request of an attempt (the asset's URL, or where it redirected to) and how it travelled.
    struct Hop: Sendable {
        var url: URL
        var route: Route
    }
}
