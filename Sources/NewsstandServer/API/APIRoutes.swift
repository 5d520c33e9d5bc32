import Foundation
import Hummingbird
import Newsstand
import NewsstandCore
import NewsstandDownload

/// The JSON API under `/api/` (described by `OpenAPIDocument.json`, served at `/api/openapi.json`).
enum APIRoutes {
    static let maxEvents = 500

    static func add(to router: Router<ServeContext>, state: ServerState) {
        let api = router.group("api")
        addDocumentAndSession(to: api, state: state)
        addIssues(to: api, state: state)
        addSubscriptions(to: api, state: state)
        addEvents(to: api, state: state)
        // Anything else under /api/ is a JSON 404, not the HTML one.
        api.get("**") { _, _ -> Response in throw HTTPError(.notFound, message: "no such API path") }
    }

    /// The OpenAPI document and the session (what a client learns first).
    private static func addDocumentAndSession(to api: RouterGroup<ServeContext>, state: ServerState) {
        api.get("openapi.json") { request, _ -> Response in
            var response = Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-cache"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json + "\n")))
            let etag = "\"openapi-\(OpenAPIDocument.json.utf8.count)-\(NewsstandInfo.version)\""
            response.headers[.eTag] = etag
            if let match = request.headers[.ifNoneMatch], FileResponse.matches(match, etag) {
                return Response(status: .notModified, headers: response.headers)
            }
            return response
        }

        api.get("session") { request, _ -> Response in
            let cursor = try await state.library.lastEventCursor()
            return try Responses.json(
                Session(csrfToken: state.policy.csrfToken, version: NewsstandInfo.version, cursor: cursor), request: request)
        }
    }

    /// Issues: pages and deltas, one issue and its assets, actions, removal.
    private static func addIssues(to api: RouterGroup<ServeContext>, state: ServerState) {
        api.get("issues") { request, _ -> Response in
            let parameters = Responses.query(request)
            // The pages send an empty status for "any"; the API's is an enum, and empty is not in it.
            if parameters["status"] == "" { throw QueryError("status must be one of \(ShelfQuery.statuses.joined(separator: ", ")), not empty") }
            let query = try ShelfQuery(parameters)
            if let text = parameters["since"] {
                guard let since = Int64(text), since >= 0 else {
                    throw QueryError("since must be an event cursor (a whole number ≥ 0), not \(text.debugDescription)")
                }
                return try Responses.json(try await changes(since: since, query: query, state: state), request: request)
            }
            let cursor = try await state.library.lastEventCursor()
            let list = try await runBlocking { () -> IssueList in
                let read = try state.readNames()
                let page = try state.shelf.snapshot().page(query, read: read)
                return IssueList(
                    total: page.total, offset: query.offset, limit: query.limit, cursor: cursor,
                    items: zip(page.issues, page.keys).map { entry($0, key: $1, read: read, state: state) }, removed: nil)
            }
            return try Responses.json(list, request: request)
        }

        api.get("issues/:key") { request, context -> Response in
            let issue = try await state.requireIssue(key: context.parameters.get("key") ?? "")
            return try Responses.json(entry(issue, key: ServerState.key(for: issue.name), read: try state.readNames(), state: state), request: request)
        }

        api.get("issues/:key/assets") { request, context -> Response in
            let issue = try await state.requireIssue(key: context.parameters.get("key") ?? "")
            return try Responses.json(state.library.report(for: issue).assets, request: request)
        }

        api.post("issues/:key/:action") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let issue = try await state.requireIssue(key: key)
            var status: HTTPResponse.Status = .ok
            switch context.parameters.get("action") ?? "" {
            case "download":
                state.downloads.download([issue.name])
                status = .accepted
            case "pin": _ = try await state.library.pin(issuesNamed: [issue.name])
            case "unpin": _ = try await state.library.unpin(issuesNamed: [issue.name])
            case "read": try await state.library.setRead(true, issuesNamed: [issue.name])
            case "unread": try await state.library.setRead(false, issuesNamed: [issue.name])
            default: throw HTTPError(.notFound, message: "no such action")
            }
            let now = try await state.library.issue(named: issue.name) ?? issue
            return try Responses.json(entry(now, key: key, read: try state.readNames(), state: state), request: request, status: status)
        }

        api.delete("issues/:key") { request, context -> Response in
            let issue = try await state.requireIssue(key: context.parameters.get("key") ?? "")
            try await state.library.removeIssue(named: issue.name)
            return try Responses.json(Message(message: "removed \(issue.name.debugDescription)"), request: request)
        }
    }

    /// Subscriptions: the list, subscribing, actions, unsubscribing.
    private static func addSubscriptions(to api: RouterGroup<ServeContext>, state: ServerState) {
        api.get("subscriptions") { request, _ -> Response in
            let subscriptions = try await state.library.subscriptions(countingIssues: true)
            return try Responses.json(state.library.reports(for: subscriptions), request: request)
        }

        api.post("subscriptions") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let asked: SubscribeRequest
            do {
                asked = try JSONDecoder().decode(SubscribeRequest.self, from: Data(body.readableBytesView))
            } catch {
                throw QueryError("the body must be {\"url\": \"https://…\"}")
            }
            guard let url = URL(string: asked.url), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw NewsstandError(.invalidURL, "\(asked.url.debugDescription) is not an http or https URL")
            }
            let report = try await state.library.subscribe(to: url)
            if report.downloadsNewIssues { state.downloads.download(report.keptIssues) }
            let subscription = try await state.library.subscriptions(countingIssues: true).first { $0.name == report.subscription }
            return try Responses.json(
                SubscribeResult(
                    subscription: subscription.map { state.library.reports(for: [$0])[0] }, addedIssues: report.addedIssues,
                    message: "subscribed to \(report.subscription)"),
                request: request, status: .created)
        }

        api.post("subscriptions/:id/:action") { request, context -> Response in
            let subscription = try await SubscriptionActions.find(context.parameters.get("id") ?? "", state: state)
            let action = context.parameters.get("action") ?? ""
            guard ["sync", "pause", "unpause"].contains(action) else { throw HTTPError(.notFound, message: "no such action") }
            let message = try await SubscriptionActions.perform(action, on: subscription, removeIssues: false, state: state)
            return try Responses.json(Message(message: message), request: request, status: action == "sync" ? .accepted : .ok)
        }

        api.delete("subscriptions/:id") { request, context -> Response in
            let subscription = try await SubscriptionActions.find(context.parameters.get("id") ?? "", state: state)
            let removeIssues = Responses.query(request)["removeIssues"] == "true"
            let message = try await SubscriptionActions.perform("unsubscribe", on: subscription, removeIssues: removeIssues, state: state)
            return try Responses.json(Message(message: message), request: request)
        }
    }

    /// The event log after a cursor.
    private static func addEvents(to api: RouterGroup<ServeContext>, state: ServerState) {
        api.get("events") { request, _ -> Response in
            let parameters = Responses.query(request)
            var since: Int64 = 0
            if let text = parameters["since"] {
                guard let value = Int64(text), value >= 0 else {
                    throw QueryError("since must be an event cursor (a whole number ≥ 0), not \(text.debugDescription)")
                }
                since = value
            }
            var limit = maxEvents
            if let text = parameters["limit"] {
                guard let value = Int(text), (1...maxEvents).contains(value) else {
                    throw QueryError("limit must be a whole number from 1 to \(maxEvents), not \(text.debugDescription)")
                }
                limit = value
            }
            var events: [EventReport] = []
            for try await event in state.library.events(since: since) {
                events.append(event)
                if events.count == limit { break }
            }
            var cursor = since
            if let last = events.last { cursor = last.cursor } else { cursor = max(since, try await state.library.lastEventCursor()) }
            return try Responses.json(EventList(cursor: cursor, events: events), request: request)
        }
    }

    static func entry(_ issue: Issue, key: String, read: Set<String>, state: ServerState) -> IssueEntry {
        IssueEntry(key: key, read: read.contains(issue.name), issue: state.library.report(for: issue))
    }

    /// The issues named by the events after `since`, as they are now, and the names of those gone.
    static func changes(since: Int64, query: ShelfQuery, state: ServerState) async throws -> IssueList {
        var names: [String] = []
        var seen = Set<String>()
        var cursor = since
        for try await event in state.library.events(since: since) {
            cursor = event.cursor
            if let name = event.issue?.name, seen.insert(name).inserted { names.append(name) }
        }
        let read = try state.readNames()
        var items: [IssueEntry] = []
        var removed: [String] = []
        for name in names {
            if let issue = try await state.library.issue(named: name) {
                items.append(entry(issue, key: ServerState.key(for: name), read: read, state: state))
            } else {
                removed.append(name)
            }
        }
        let window = Array(items.dropFirst(query.offset).prefix(query.limit))
        return IssueList(total: items.count, offset: query.offset, limit: query.limit, cursor: cursor, items: window, removed: removed)
    }
}
