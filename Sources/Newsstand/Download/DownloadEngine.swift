import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Fetches one asset into its partial file, resuming, retrying and verifying: the HTTP half of a download.
/// One engine (and one `HTTPClient` per proxy setting) serves every download of a library.
final class DownloadEngine: Sendable {
    struct Job: Sendable {
        var assetID: String
        var url: URL
        var sha256: String?
        var partialPath: String
        var recordPath: String
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

    private let configuration: Library.Configuration
    private let logger: Logger
    private let ownedClients: NIOLockedValueBox<[String: HTTPClient]>
    private let injected: HTTPClient?

    init(configuration: Library.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.injected = configuration.httpClient
        self.ownedClients = NIOLockedValueBox([:])
    }

    func shutdown() async throws {
        let clients = ownedClients.withLockedValue { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in clients { try await client.shutdown() }
    }

    /// The client for `url`: the injected one, or an owned one per proxy (from the usual environment variables).
    private func client(for url: URL) -> HTTPClient {
        if let injected { return injected }
        let proxy = ProxySettings.fromEnvironment().proxy(for: url)
        let key = proxy.map { "\($0.host):\($0.port)" } ?? "direct"
        return ownedClients.withLockedValue { clients in
            if let client = clients[key] { return client }
            var config = HTTPClient.Configuration(
                redirectConfiguration: .follow(max: configuration.maxRedirects, allowCycles: false),
                timeout: .init(
                    connect: .seconds(Int64(configuration.connectTimeout.components.seconds)),
                    read: .seconds(Int64(configuration.readTimeout.components.seconds))),
                decompression: .disabled)
            config.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            config.httpVersion = .http1Only
            // Our own retry loop (with backoff, Retry-After and a bounded budget) handles failed connections;
            // the pool's internal retrying would otherwise hide them until the connect timeout.
            config.connectionPool.retryConnectionEstablishment = false
            // Larger socket reads than NIO's 64 KiB default: fewer, bigger body parts for the file sink.
            config.http1_1ConnectionDebugInitializer = { channel in
                channel.setOption(
                    ChannelOptions.recvAllocator,
                    value: AdaptiveRecvByteBufferAllocator(minimum: 64 << 10, initial: 256 << 10, maximum: 1 << 20))
            }
            if let proxy { config.proxy = .server(host: proxy.host, port: proxy.port) }
            let client = HTTPClient(
                eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: config)
            clients[key] = client
            return client
        }
    }

    /// Downloads `job` into its partial file until the whole body is there, retrying transient failures.
    /// - Throws: `NewsstandError` for permanent failures, `CancellationError` when cancelled.
    func fetch(_ job: Job, progress: @escaping @Sendable (Progress) -> Void) async throws -> Result {
        let hashing = job.sha256 != nil
        let sink = try await runBlocking {
            try FileSink(path: job.partialPath, recordPath: job.recordPath, hashing: hashing)
        }
        let startSize = sink.size
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
            var request = try HTTPClient.Request(url: job.url.absoluteString, method: .GET)
            request.headers.add(name: "User-Agent", value: "issues/\(NewsstandInfo.version)")
            request.headers.add(name: "Accept-Encoding", value: "identity")
            var validator: String?
            if offset > 0, let record, let value = record.ifRangeValidator {
                validator = value
                request.headers.add(name: "Range", value: "bytes=\(offset)-")
                request.headers.add(name: "If-Range", value: value)
            }
            let throttle = ProgressThrottle(start: started, baseline: startSize)
            // Where this response's body starts: the offset asked for, or 0 when the server sent it all.
            let base = NIOLockedValueBox(offset)
            let delegate = ResponseDelegate(
                sink: sink, requestedOffset: offset, sentValidator: validator, url: job.url,
                onStart: { from, expected in
                    base.withLockedValue { $0 = from }
                    progress(.started(resumingFrom: from, expected: expected))
                },
                onProgress: { received, expected in
                    let total = base.withLockedValue { $0 } + received
                    if let rate = throttle.shouldReport(total: total) {
                        progress(.bytes(received: total, expected: expected, bytesPerSecond: rate))
                    }
                }
            )
            do {
                let outcome = try await execute(request, delegate: delegate, url: job.url)
                let (size, digest) = try await sink.drain()
                switch outcome {
                case .body(let expected):
                    if let expected, size != expected {
                        throw NewsstandError(
                            .lengthMismatch, "\(job.url.absoluteString) sent \(size) of \(expected) bytes")
                    }
                    try verify(job, digest: digest)
                    return Result(
                        size: size, record: ResumeRecord.load(job.recordPath),
                        bytesFetched: fetched + delegate.receivedBytes)
                case .rangeNotSatisfiable(let total):
                    // A server may omit `Content-Range: bytes */N`; the recorded size then decides.
                    if offset > 0, (total ?? record?.expectedBytes) == offset {
                        try verify(job, digest: digest)
                        return Result(size: size, record: record, bytesFetched: fetched + delegate.receivedBytes)
                    }
                    // Our bytes do not fit the resource any more: start over (the catch below truncates).
                    throw RangeMismatch(reason: "the server refused the range from byte \(offset) (416)")
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
                fetched += delegate.receivedBytes
                let drained = try? await sink.drain()
                if Task.isCancelled { throw CancellationError() }
                let classified = DownloadEngine.classify(error, url: job.url)
                guard classified.isTransient else { throw classified.error }
                if let mismatch = error as? RangeMismatch {
                    logger.debug("restarting \(job.url.absoluteString) from zero: \(mismatch.reason)")
                    try await runBlocking { try sink.truncateNow() }
                }
                let lastError = classified.error.message
                let reached = drained?.size ?? sink.size
                let madeProgress = reached > furthest
                furthest = max(furthest, reached)
                failuresWithoutProgress = madeProgress ? 0 : failuresWithoutProgress + 1
                if failuresWithoutProgress >= configuration.retry.maxAttemptsWithoutProgress {
                    throw NewsstandError(
                        classified.error.code,
                        "\(lastError) (gave up after \(failuresWithoutProgress) attempts without progress)",
                        underlying: error)
                }
                let delay = configuration.retry.delay(
                    attempt: max(failuresWithoutProgress, 1), retryAfter: classified.retryAfter,
                    madeProgress: madeProgress)
                progress(.retrying(attempt: failuresWithoutProgress, delay: delay, reason: lastError))
                try await Task.sleep(for: delay)
            }
        }
    }

    private func verify(_ job: Job, digest: String?) throws {
        guard let expected = job.sha256 else { return }
        guard let digest, digest == expected.lowercased() else {
            throw NewsstandError(
                .checksumMismatch,
                "\(job.url.absoluteString) has SHA-256 \(digest ?? "unknown"), expected \(expected); the bad file was deleted"
            )
        }
    }

    private func execute(_ request: HTTPClient.Request, delegate: ResponseDelegate, url: URL) async throws
        -> AttemptOutcome
    {
        let task = client(for: url).execute(request: request, delegate: delegate, logger: logger)
        return try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
    }

    struct Classified {
        var error: NewsstandError
        var isTransient: Bool
        var retryAfter: Duration?
    }

    /// Sorts a failure into retry-worthy or permanent, with a message naming the URL.
    static func classify(_ error: any Error, url: URL) -> Classified {
        let target = url.absoluteString
        switch error {
        case let error as NewsstandError:
            let transient = error.code == .lengthMismatch
            return Classified(error: error, isTransient: transient)
        case let status as HTTPStatusFailure:
            let text = HTTPResponseStatus(statusCode: status.status).reasonPhrase
            return Classified(
                error: NewsstandError(.httpStatus, "\(target) answered \(status.status) \(text)"),
                isTransient: status.isTransient, retryAfter: status.retryAfter)
        case let mismatch as RangeMismatch:
            return Classified(error: NewsstandError(.network, "\(target): \(mismatch.reason)"), isTransient: true)
        case let error as HTTPClientError:
            switch error {
            case .redirectLimitReached, .redirectCycleDetected:
                return Classified(
                    error: NewsstandError(
                        .tooManyRedirects, "\(target): too many redirects or a redirect loop", underlying: error),
                    isTransient: false)
            case .invalidURL, .emptyHost, .emptyScheme, .alreadyShutdown:
                return Classified(
                    error: NewsstandError(.invalidURL, "\(target): \(error)", underlying: error), isTransient: false)
            case .readTimeout, .connectTimeout, .writeTimeout:
                return Classified(
                    error: NewsstandError(.network, "\(target): timed out (\(error))", underlying: error),
                    isTransient: true)
            default:
                let text = String(describing: error)
                if text.contains("unsupportedScheme") {
                    return Classified(
                        error: NewsstandError(.invalidURL, "\(target): unsupported URL scheme", underlying: error),
                        isTransient: false)
                }
                return Classified(
                    error: NewsstandError(.network, "\(target): \(DownloadEngine.describe(error))", underlying: error),
                    isTransient: true)
            }
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            // A certificate or handshake failure does not heal by retrying.
            return Classified(
                error: NewsstandError(
                    .network, "\(target): TLS failed: \(DownloadEngine.describeTLS(error))", underlying: error),
                isTransient: false)
        default:
            return Classified(
                error: NewsstandError(.network, "\(target): \(DownloadEngine.describe(error))", underlying: error),
                isTransient: true)
        }
    }

    /// BoringSSL's reason code (`CERTIFICATE_VERIFY_FAILED`, `WRONG_VERSION_NUMBER`, …) rather than its dump.
    private static func describeTLS(_ error: any Error) -> String {
        let text = String(describing: error)
        if let range = text.range(of: "OPENSSL_internal:") {
            let reason = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !reason.isEmpty { return "handshake failed (\(reason))" }
        }
        return text.count > 160 ? String(text.prefix(160)) + "…" : text
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError, error == .remoteConnectionClosed {
            return "the connection was closed before the whole body arrived"
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)).lowercased() }
        if let error = error as? NIOConnectionError {
            let reasons = error.connectionErrors.map { failure -> String in
                if let io = failure.error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
                return String(describing: failure.error)
            }
            let reason = Set(reasons).sorted().joined(separator: ", ")
            return "cannot connect to \(error.host):\(error.port)" + (reason.isEmpty ? "" : " (\(reason))")
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "timed out connecting" }
        return String(describing: error)
    }
}

/// Rate-limits progress reports to a few per second and computes the transfer rate.
private final class ProgressThrottle: Sendable {
    private let start: ContinuousClock.Instant
    private let baseline: Int64
    private let last = NIOLockedValueBox<ContinuousClock.Instant?>(nil)

    init(start: ContinuousClock.Instant, baseline: Int64) {
        self.start = start
        self.baseline = baseline
    }

    func shouldReport(total: Int64) -> Double? {
        let now = ContinuousClock.now
        let due = last.withLockedValue { last -> Bool in
            if let previous = last, now - previous < .milliseconds(200) { return false }
            last = now
            return true
        }
        guard due else { return nil }
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(total - baseline) / seconds : 0
    }
}
