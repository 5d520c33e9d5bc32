import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

// MARK: - Shared state

/// In-memory content registered with `serve`.
struct StoredContent: Sendable {
    var bytes: ByteBuffer
    var etag: String
    var lastModified: Int64
    var contentType: String
}

/// What the server remembers about requests for one path.
struct PathStats: Sendable {
    var bodyBytes = 0
    var requests: [RecordedRequest] = []
}

/// Everything the handlers and the test thread share; only touched under `ServerCore.state`.
struct ServerState: Sendable {
    var contents: [String: StoredContent] = [:]
    var directories: [String] = []
    var faults: [String: Faults] = [:]
    var defaultFaults = Faults()
    var progress: [String: FaultProgress] = [:]
    var stats: [String: PathStats] = [:]
    /// Path → the one `sig` query value accepted, and the value that replaces it when a cut happens.
    var signatures: [String: (valid: String, next: String?)] = [:]
}

/// How a request is to be answered, decided under the lock in one step.
enum Route: Sendable {
    /// A short fixed answer (errors, 503s, status overrides, redirects).
    case simple(SimpleResponse)
    /// In-memory content, shaped by the faults.
    case content(StoredContent, Faults)
    /// A file to look for at these absolute paths, in order, shaped by the faults.
    case file(candidates: [String], Faults)
}

/// A short response with an optional text body.
struct SimpleResponse: Sendable {
    var status: HTTPResponseStatus
    var headers: [(String, String)] = []
    /// Nil sends the reason phrase; statuses that cannot carry a body get none anyway.
    var text: String? = nil
}

/// The server's shared state and resources, reached from every connection handler.
final class ServerCore: Sendable {
    let threadPool: NIOThreadPool
    let allocator = ByteBufferAllocator()
    /// Shared between event-loop handlers and the test's thread, hence the lock.
    let state = Mutex(ServerState())

    init(threadPool: NIOThreadPool) {
        self.threadPool = threadPool
    }

    /// Records the request and decides how to answer it, using up counted faults.
    func route(path: String, request: RecordedRequest) -> Route {
        state.withLock { state in
            state.stats[path, default: PathStats()].requests.append(request)
            var faults = state.faults[path] ?? state.defaultFaults
            var progress = state.progress[path] ?? FaultProgress()
            defer { state.progress[path] = progress }
            if let honoured = faults.honourRangeRequests, request.header("Range") != nil {
                if progress.rangedRequests >= honoured { faults.ignoreRange = true }
                progress.rangedRequests += 1
            }

            if let rule = state.signatures[path], Self.signature(in: request.uri) != rule.valid {
                return .simple(SimpleResponse(status: .forbidden, text: "signature expired"))
            }

            if progress.unavailableSent < faults.unavailableResponses {
                progress.unavailableSent += 1
                var headers: [(String, String)] = []
                if let retryAfter = faults.retryAfter { headers.append(("Retry-After", retryAfter)) }
                return .simple(SimpleResponse(status: .serviceUnavailable, headers: headers))
            }
            if let status = faults.status, progress.statusSent < faults.statusResponses {
                progress.statusSent += 1
                var headers: [(String, String)] = []
                if status == 416, let content = state.contents[path] {
                    headers.append(("Content-Range", "bytes */\(content.bytes.readableBytes)"))
                }
                return .simple(SimpleResponse(status: HTTPResponseStatus(statusCode: status), headers: headers))
            }
            if let location = faults.redirectTo {
                return .simple(
                    SimpleResponse(
                        status: HTTPResponseStatus(statusCode: faults.redirectStatus),
                        headers: [("Location", location)]
                    )
                )
            }
            guard request.method == "GET" || request.method == "HEAD" else {
                return .simple(SimpleResponse(status: .methodNotAllowed, headers: [("Allow", "GET, HEAD")]))
            }
            if let content = state.contents[path] {
                return .content(content, faults)
            }
            if let relative = Self.relativeFilePath(path), !state.directories.isEmpty {
                return .file(candidates: state.directories.map { $0 + "/" + relative }, faults)
            }
            return .simple(SimpleResponse(status: .notFound))
        }
    }

    /// Uses up one cut of `path` if any is left.
    func takeCut(path: String, faults: Faults) -> Bool {
        state.withLock { state in
            var progress = state.progress[path] ?? FaultProgress()
            guard progress.cutsDone < faults.cutResponses else { return false }
            progress.cutsDone += 1
            state.progress[path] = progress
            // A signed link that expires mid-transfer: the cut is the moment it stops being accepted.
            if let rule = state.signatures[path], let next = rule.next {
                state.signatures[path] = (next, nil)
            }
            return true
        }
    }

    func addBodyBytes(path: String, count: Int) {
        state.withLock { $0.stats[path, default: PathStats()].bodyBytes += count }
    }

    /// The `sig` query parameter of a request target, if any.
    static func signature(in uri: String) -> String? {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("sig=") {
            return String(pair.dropFirst(4))
        }
        return nil
    }

    /// The path relative to a served directory, or nil when it names no file there (`..`
    /// segments would escape the directory; a NUL cannot be in a file name).
    static func relativeFilePath(_ path: String) -> String? {
        let segments = path.split(separator: "/")
        guard !segments.isEmpty, !segments.contains(".."), !path.contains("\0") else { return nil }
        return segments.filter { $0 != "." }.joined(separator: "/")
    }
}
