import Foundation
import Hummingbird
import Logging
import NIOCore
import Newsstand
import NewsstandDownload
import ServiceLifecycle

/// `GET /events`: Server-Sent Events from the event log (`Library.events(since:follow:)`, woken by inotify
/// when any process commits), each with `id:` its cursor so that a reconnecting browser's `Last-Event-ID`
/// resumes where it left off; and, while downloads run, a `progress` event a few times a second. The
/// stream ends when the client goes or the server shuts down.
enum EventStream {
    static let progressInterval: Duration = .milliseconds(400)
    static let keepAliveInterval: Duration = .seconds(15)

    static func response(request: Request, state: ServerState) async throws -> Response {
        let resumeFrom = request.headers[.lastEventID].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        let asked = Form.parse((request.uri.query ?? "")[...])["since"].flatMap { Int64($0) }
        let since: Int64
        if let cursor = resumeFrom ?? asked {
            since = max(0, cursor)
        } else {
            since = try await state.library.lastEventCursor()
        }
        let body = ResponseBody { writer in
            // A client that cannot keep up is never thinned: the 256 frames buffered are written in order, and the
            // first that does not fit ends the stream after them. The browser reconnects with the last id it got
            // (`Last-Event-ID`) and the log gives it the rest (a bufferingNewest buffer dropped the oldest frames,
            // and a client watching a 3,000-issue import lost 2,716 of them).
            let (frames, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingOldest(256))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // The browser retries after 2 s when the connection drops.
                    continuation.yield(ByteBuffer(string: "retry: 2000\n\n"))
                    for try await event in state.library.events(since: since, follow: true) {
                        if case .dropped = continuation.yield(ByteBuffer(string: frame(event))) {
                            continuation.finish()
                            return
                        }
                    }
                }
                group.addTask {
                    var last: [ProgressItem] = []
                    var quiet: Duration = .zero
                    while !Task.isCancelled {
                        try await Task.sleep(for: progressInterval)
                        let items = (try? await runBlocking { try state.progress() }) ?? []
                        if items != last, !items.isEmpty {
                            continuation.yield(ByteBuffer(string: progressFrame(items)))
                            quiet = .zero
                        } else {
                            quiet += progressInterval
                            if quiet >= keepAliveInterval {
                                continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
                                quiet = .zero
                            }
                        }
                        last = items
                    }
                }
                group.addTask {
                    // Ends the stream (and the producers) on shutdown, so that stopping never waits for clients.
                    try? await gracefulShutdown()
                    continuation.finish()
                }
                for await frame in frames {
                    try await writer.write(frame)
                }
                group.cancelAll()
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
            body: body)
    }

    /// One event-log entry as an SSE frame: `data` is `{"key": …, "publication": …, "event": EventReport}`.
    static func frame(_ event: EventReport) -> String {
        let key = event.issue.map { ServerState.key(for: $0.name) }
        let publication = event.issue.map { Issue.publicationName(stored: $0.publication, issueName: $0.name) }
        let envelope = EventEnvelope(key: key, publication: publication, event: event)
        let json = (try? JSON.encoder.encode(envelope)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "id: \(event.cursor)\nevent: \(event.kind)\ndata: \(json)\n\n"
    }

    static func progressFrame(_ items: [ProgressItem]) -> String {
        let json = (try? JSON.encoder.encode(["assets": items])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "event: progress\ndata: \(json)\n\n"
    }
}

/// An event with the key of its issue, so that a page can find the issue's card, and the publication the
/// shelf's filter compares (the stored one, else the one worked out from the name, as `Issue.publicationName`).
struct EventEnvelope: Codable, Sendable {
    var key: String?
    var publication: String?
    var event: EventReport
}

/// The server's JSON encoder: sorted keys, as every report of the CLI is written.
enum JSON {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
