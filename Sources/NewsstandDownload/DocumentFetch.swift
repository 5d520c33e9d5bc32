import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import NewsstandCore

/// A small document (a feed) fetched whole into memory, with what a conditional refresh and a move need.
package struct FetchedDocument: Sendable {
    package enum Outcome: Sendable {
        /// 200 with a body.
        case body(Data)
        /// 304: the document did not change since the validators sent.
        case notModified
    }

    package var outcome: Outcome
    /// The URL asked for.
    package var requestedURL: URL
    /// The URL the body came from, after redirects.
    package var finalURL: URL
    /// Where the document now lives for good: set when every redirect on the way was permanent (301, 308).
    package var permanentURL: URL?
    package var etag: String?
    package var lastModified: String?
    var contentType: String?
    /// How long the answer says it stays fresh (`Cache-Control: max-age`, `Expires`): the next check waits.
    package var freshFor: Duration?
}

/// The validators a conditional GET sends.
package struct DocumentValidators: Sendable, Equatable {
    package var etag: String?
    package var lastModified: String?

    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

extension DownloadEngine {
    /// Fetches `url` into memory with a conditional GET, following redirects itself so that it can tell
    /// a permanent move (every hop 301 or 308) from a temporary one.
    ///
    /// Bounded in time: each request is under the downloads' stall limit (a server that drips a byte every few
    /// seconds is given up on), and the whole fetch, retries and redirects included, under
    /// ``Configuration/documentDeadline``, so that a `sync` always ends.
    /// - Parameters:
    ///   - validators: Sent as `If-None-Match` / `If-Modified-Since`, when known.
    ///   - maxBytes: The body cap; a larger body is refused (`.unsafeFeed`) as soon as it passes the cap.
    /// - Throws: `NewsstandError`: `.httpStatus` (with the status in the text) for other answers,
    ///   `.network` (also for a stall or the deadline), `.tooManyRedirects`, `.unsafeFeed`.
    package func fetchDocument(
        _ url: URL, validators: DocumentValidators, maxBytes: Int, headers extra: [(String, String)] = []
    ) async throws -> FetchedDocument {
        let deadline = configuration.documentDeadline
        return try await withThrowingTaskGroup(of: FetchedDocument?.self) { group in
            group.addTask {
                try await self.fetchDocumentRetrying(url, validators: validators, maxBytes: maxBytes, headers: extra)
            }
            group.addTask {
                try await Task.sleep(for: deadline)
                return nil  // the deadline passed first
            }
            defer { group.cancelAll() }  // the other child: the timer, or the fetch (which cancels its request)
            guard case .some(.some(let document)) = try await group.next() else {
                try Task.checkCancellation()
                throw NewsstandError(
                    .network, "\(url.absoluteString): no complete answer within \(deadline); gave up")
            }
            return document
        }
    }

    private func fetchDocumentRetrying(
        _ url: URL, validators: DocumentValidators, maxBytes: Int, headers extra: [(String, String)]
    ) async throws -> FetchedDocument {
        // A feed is small and fetched again on the next sync: a few quick retries of what may pass (a
        // dropped connection, 408, 429, 5xx), not the patient budget of an asset download.
        var attempt = 1
        while true {
            do {
                return try await fetchDocumentOnce(url, validators: validators, maxBytes: maxBytes, headers: extra)
            } catch let error as TransientDocumentFailure {
                // A server that asks for more than a short pause is asked again at the next check, not now.
                guard attempt < 3, (error.retryAfter ?? .zero) <= .seconds(10) else {
                    var failure = error.error
                    failure.retryAfter = error.retryAfter
                    throw failure
                }
                let delay = min(error.retryAfter ?? .milliseconds(500 * attempt), .seconds(10))
                logger.debug("retrying \(url.absoluteString) in \(delay): \(error.error.message)")
                try await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }

    private func fetchDocumentOnce(
        _ url: URL, validators: DocumentValidators, maxBytes: Int, headers extra: [(String, String)]
    ) async throws -> FetchedDocument {
        var headers = HTTPHeaders()
        headers.add(name: "User-Agent", value: NewsstandInfo.userAgent)
        headers.add(name: "Accept", value: "application/rss+xml, application/atom+xml, application/feed+json, application/json;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5")
        headers.add(name: "Accept-Encoding", value: "identity")
        if let etag = validators.etag { headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = validators.lastModified { headers.add(name: "If-Modified-Since", value: lastModified) }
        // The caller's headers (a subscription's `--header`) follow the asset rules: `Authorization`,
        // `Cookie` and `Proxy-Authorization` go to the feed's own origin only, not across a redirect.
        let own = Dictionary(extra, uniquingKeysWith: { _, last in last })

        var hop = Hop(url: url, route: .direct)
        var visited: Set<String> = [url.absoluteString]
        var allPermanent = true
        do {
            while true {
                try Task.checkCancellation()
                hop.route = try route(for: hop.url)
                let request = try request(
                    for: hop.url, route: hop.route,
                    headers: DownloadEngine.hopHeaders(headers, adding: own, from: url, to: hop.url))
                let delegate = DocumentDelegate(maxBytes: maxBytes)
                // Under the downloads' stall limit: a feed that drips bytes is given up on (and retried) like an
                // asset transfer would be.
                let answer = try await execute(
                    request, delegate: delegate, route: hop.route, received: { delegate.receivedBytes })
                let status = answer.status
                if [301, 302, 303, 307, 308].contains(status), let location = answer.headers.first(name: "location") {
                    guard let next = URL(string: location, relativeTo: hop.url)?.absoluteURL,
                        (try? AssetRequest.parseURL(next.absoluteString)) != nil
                    else {
                        throw NewsstandError(.invalidURL, "\(url.absoluteString) redirected to an unusable URL: \(location)")
                    }
                    guard visited.count <= configuration.maxRedirects, visited.insert(next.absoluteString).inserted else {
                        throw NewsstandError(.tooManyRedirects, "\(url.absoluteString): too many redirects or a redirect loop")
                    }
                    if status != 301 && status != 308 { allPermanent = false }
                    hop.url = next
                    continue
                }
                let moved = allPermanent && hop.url != url ? hop.url : nil
                let etag = answer.headers.first(name: "etag")
                let lastModified = answer.headers.first(name: "last-modified")
                let contentType = answer.headers.first(name: "content-type")
                let freshFor = Freshness.lifetime(
                    cacheControl: answer.headers[canonicalForm: "cache-control"].map(String.init).joined(separator: ","),
                    expires: answer.headers.first(name: "expires"), date: answer.headers.first(name: "date"))
                switch status {
                case 304:
                    return FetchedDocument(
                        outcome: .notModified, requestedURL: url, finalURL: hop.url, permanentURL: moved, etag: etag ?? validators.etag,
                        lastModified: lastModified ?? validators.lastModified, contentType: contentType, freshFor: freshFor)
                case 200...299:
                    return FetchedDocument(
                        outcome: .body(answer.body), requestedURL: url, finalURL: hop.url, permanentURL: moved, etag: etag,
                        lastModified: lastModified, contentType: contentType, freshFor: freshFor)
                default:
                    let text = HTTPResponseStatus(statusCode: status).reasonPhrase
                    let error = NewsstandError(
                        .httpStatus, "\(hop.url.absoluteString) answered \(status) \(text)", httpStatus: status)
                    if status == 408 || status == 429 || (500...599).contains(status) {
                        throw TransientDocumentFailure(
                            error: error, retryAfter: answer.headers.first(name: "retry-after").flatMap { RetryAfter.parse($0) })
                    }
                    throw error
                }
            }
        } catch let error as NewsstandError {
            throw error
        } catch let error as TransientDocumentFailure {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch let tooLarge as DocumentTooLarge {
            throw NewsstandError(
                .unsafeFeed, "\(hop.url.absoluteString) sent more than \(tooLarge.limit) bytes; refused")
        } catch {
            let classified = await DownloadEngine.classifyExplained(error, url: url, hop: hop)
            if classified.isTransient { throw TransientDocumentFailure(error: classified.error, retryAfter: nil) }
            throw classified.error
        }
    }
}

/// A failure worth one more try soon.
struct TransientDocumentFailure: Error {
    var error: NewsstandError
    var retryAfter: Duration?
}

struct DocumentTooLarge: Error {
    var limit: Int
}

/// Collects a response whole, refusing a body over the cap as soon as it passes it.
final class DocumentDelegate: HTTPClientResponseDelegate, Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }
    typealias Response = Answer

    private let maxBytes: Int
    private let state = Mutex<(status: Int, headers: HTTPHeaders, body: Data)>((0, [:], Data()))
    private let received = Atomic<Int64>(0)

    /// Body bytes received so far, of any status: what the stall watch measures.
    var receivedBytes: Int64 { received.load(ordering: .relaxed) }

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    func didReceiveHead(task: HTTPClient.Task<Answer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let declared = head.headers.first(name: "content-length").flatMap { Int($0) }
        if let declared, declared > maxBytes, (200...299).contains(Int(head.status.code)) {
            return task.eventLoop.makeFailedFuture(DocumentTooLarge(limit: maxBytes))
        }
        state.withLock {
            $0.status = Int(head.status.code)
            $0.headers = head.headers
            // One allocation of the announced size, not a doubling series (an 8 MB feed would peak at 16).
            if let declared, (200...299).contains($0.status) { $0.body.reserveCapacity(declared) }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Answer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        received.add(Int64(buffer.readableBytes), ordering: .relaxed)
        let tooLarge = state.withLock { state -> Bool in
            // The body of a redirect or an error is not needed; only its status.
            guard (200...299).contains(state.status) else { return false }
            if state.body.count + buffer.readableBytes > maxBytes { return true }
            state.body.append(contentsOf: buffer.readableBytesView)
            return false
        }
        return tooLarge ? task.eventLoop.makeFailedFuture(DocumentTooLarge(limit: maxBytes)) : task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Answer>) throws -> Answer {
        state.withLock { Answer(status: $0.status, headers: $0.headers, body: $0.body) }
    }
}
