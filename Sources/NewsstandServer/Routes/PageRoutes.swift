import Foundation
import Hummingbird
import Logging
import Newsstand
import NewsstandCore
import NewsstandDownload

/// The browser's pages: the shelf, an issue, its removal's confirmation, subscriptions, login.
enum PageRoutes {
    static func add(to router: Router<ServeContext>, state: ServerState) {
        addShelfAndIssues(to: router, state: state)
        addSubscriptions(to: router, state: state)
        addLoginAndAssets(to: router, state: state)
    }

    /// The shelf, an issue's page, and an issue's actions (download, pin, read, remove with its confirmation).
    private static func addShelfAndIssues(to router: Router<ServeContext>, state: ServerState) {
        router.get("/") { request, context -> Response in
            let query = try ShelfQuery(Responses.query(request))
            let subscriptions = try await state.library.subscriptions()
            let cursor = try await state.library.lastEventCursor()
            let (page, read, progress) = try await runBlocking {
                let read = try state.readNames()
                return (try state.shelf.snapshot().page(query, read: read), read, state.progressByIssue())
            }
            return Responses.html(
                ShelfPageView.render(
                    page, read: read, subscriptions: subscriptions, progress: progress, cursor: cursor,
                    nonce: context.nonce, csrf: state.policy.csrfToken))
        }

        router.get("/issues/:key") { _, context -> Response in
            let key = context.parameters.get("key") ?? ""
            var issue = try await state.requireIssue(key: key)
            // Opened in the browser is read, as `issues open` makes it.
            if try !state.readNames().contains(issue.name) {
                try await state.library.setRead(true, issuesNamed: [issue.name])
            }
            issue = try await state.library.issue(named: issue.name) ?? issue
            let directory = state.directory(of: issue)
            let shown = issue
            let files = try await runBlocking { IssuePageView.files(of: shown, in: directory) }
            return Responses.html(
                IssuePageView.render(
                    issue, key: key, directory: directory, isRead: true, files: files, nonce: context.nonce,
                    csrf: state.policy.csrfToken))
        }

        router.get("/issues/:key/remove") { _, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let issue = try await state.requireIssue(key: key)
            return Responses.html(
                IssuePageView.confirmRemoval(issue, key: key, nonce: context.nonce, csrf: state.policy.csrfToken))
        }

        // The trie router matches a literal segment before a parameter and does not fall back across
        // methods: a path with a GET route of its own (`remove`) needs its POST named too.
        let issueAction: @Sendable (Request, ServeContext) async throws -> Response = { _, context in
            let key = context.parameters.get("key") ?? ""
            let issue = try await state.requireIssue(key: key)
            switch context.parameters.get("action") ?? "remove" {
            case "download": state.downloads.download([issue.name])
            case "pin": _ = try await state.library.pin(issuesNamed: [issue.name])
            case "unpin": _ = try await state.library.unpin(issuesNamed: [issue.name])
            case "read": try await state.library.setRead(true, issuesNamed: [issue.name])
            case "unread": try await state.library.setRead(false, issuesNamed: [issue.name])
            case "remove":
                try await state.library.removeIssue(named: issue.name)
                return Responses.redirect("/")
            default: throw HTTPError(.notFound)
            }
            return Responses.redirect("/issues/\(key)")
        }
        router.post("/issues/:key/remove", use: issueAction)
        router.post("/issues/:key/:action", use: issueAction)
    }

    /// The subscriptions page and its actions: subscribe by URL or OPML, sync, configure, pause, unsubscribe.
    private static func addSubscriptions(to router: Router<ServeContext>, state: ServerState) {
        router.get("/subscriptions") { request, context -> Response in
            let schedule = try await state.library.schedule().sorted {
                $0.subscription.name.localizedStandardCompare($1.subscription.name) == .orderedAscending
            }
            return Responses.html(
                SubscriptionsPageView.render(
                    schedule, message: Responses.query(request)["message"], nonce: context.nonce,
                    csrf: state.policy.csrfToken))
        }

        router.post("/subscriptions") { request, _ -> Response in
            var request = request
            let form = try await Responses.form(&request)
            let text = (form["url"] ?? "").trimmingCharacters(in: .whitespaces)
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw NewsstandError(.invalidURL, "\(text.debugDescription) is not an http or https URL")
            }
            let report = try await state.library.subscribe(to: url)
            if report.downloadsNewIssues { state.downloads.download(report.keptIssues) }
            let message = "subscribed to \(report.subscription): \(report.addedIssues.count) new issue\(report.addedIssues.count == 1 ? "" : "s")"
            return Responses.redirect("/subscriptions?message=\(Form.encode(message))")
        }

        router.post("/subscriptions/sync") { _, _ -> Response in
            SubscriptionActions.syncInBackground(nil, state: state)
            return Responses.redirect("/subscriptions?message=\(Form.encode("sync started"))")
        }

        router.post("/subscriptions/opml") { request, _ -> Response in
            var request = request
            let form = try await Responses.form(&request)
            let entries = try await state.library.subscribe(opml: Data((form["opml"] ?? "").utf8))
            var added = 0
            for entry in entries {
                if case .success(let report) = entry.result {
                    added += 1
                    if report.downloadsNewIssues { state.downloads.download(report.keptIssues) }
                }
            }
            let message = "OPML: \(added) of \(entries.count) feeds subscribed"
            return Responses.redirect("/subscriptions?message=\(Form.encode(message))")
        }

        router.get("/subscriptions/:id/unsubscribe") { _, context -> Response in
            let subscription = try await SubscriptionActions.find(context.parameters.get("id") ?? "", state: state)
            return Responses.html(
                SubscriptionsPageView.confirmUnsubscribe(subscription, nonce: context.nonce, csrf: state.policy.csrfToken))
        }

        let subscriptionAction: @Sendable (Request, ServeContext) async throws -> Response = { request, context in
            var request = request
            let subscription = try await SubscriptionActions.find(context.parameters.get("id") ?? "", state: state)
            let action = context.parameters.get("action") ?? "unsubscribe"
            let removeIssues = action == "unsubscribe" ? try await Responses.form(&request)["removeIssues"] == "1" : false
            let message = try await SubscriptionActions.perform(action, on: subscription, removeIssues: removeIssues, state: state)
            return Responses.redirect("/subscriptions?message=\(Form.encode(message))")
        }
        router.post("/subscriptions/:id/configure") { request, context -> Response in
            var request = request
            let subscription = try await SubscriptionActions.find(context.parameters.get("id") ?? "", state: state)
            let form = try await Responses.form(&request)
            let message = try await SubscriptionActions.configure(subscription, form: form, state: state)
            return Responses.redirect("/subscriptions?message=\(Form.encode(message))")
        }
        router.post("/subscriptions/:id/unsubscribe", use: subscriptionAction)
        router.post("/subscriptions/:id/:action", use: subscriptionAction)
    }

    /// The login form, the stylesheet and script, and the live events.
    private static func addLoginAndAssets(to router: Router<ServeContext>, state: ServerState) {
        router.get("/login") { request, context -> Response in
            Responses.html(
                SubscriptionsPageView.login(
                    failed: Responses.query(request)["failed"] != nil, nonce: context.nonce, csrf: state.policy.csrfToken))
        }

        router.post("/login") { request, _ -> Response in
            var request = request
            let form = try await Responses.form(&request)
            guard let token = state.policy.accessToken else { return Responses.redirect("/") }
            guard AccessToken.equal(form["token"] ?? "", token) else { return Responses.redirect("/login?failed=1") }
            var response = Responses.redirect("/")
            // HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it.
            response.headers[.setCookie] = "issues_token=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000"
            return response
        }

        router.get("/static/app.css") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: StaticAssets.css)))
        }
        router.get("/static/app.js") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: StaticAssets.javaScript)))
        }

        router.get("/events") { request, _ -> Response in
            try await EventStream.response(request: request, state: state)
        }
    }
}

/// What the subscriptions page and the API do to a subscription.
enum SubscriptionActions {
    static func find(_ id: String, state: ServerState) async throws -> Subscription {
        guard let found = try await state.library.subscriptions(countingIssues: true).first(where: { $0.id == id }) else {
            throw NewsstandError(.subscriptionNotFound, "there is no subscription with the id \(id.debugDescription)")
        }
        return found
    }

    /// Performs `action` (`sync`, `pause`, `unpause`, `unsubscribe`); returns what was done, in words.
    static func perform(_ action: String, on subscription: Subscription, removeIssues: Bool, state: ServerState) async throws -> String {
        switch action {
        case "sync":
            syncInBackground([subscription.name], state: state)
            return "sync of \(subscription.name) started"
        case "pause":
            try await state.library.changeSubscription(named: subscription.name, SubscriptionChange(isPaused: true))
            return "paused \(subscription.name)"
        case "unpause":
            try await state.library.changeSubscription(named: subscription.name, SubscriptionChange(isPaused: false))
            return "resumed \(subscription.name)"
        case "unsubscribe":
            let removed = try await state.library.unsubscribe(named: subscription.name, removeIssues: removeIssues)
            return "unsubscribed from \(subscription.name)" + (removed.isEmpty ? "" : "; removed \(removed.count) issues")
        default:
            throw HTTPError(.notFound)
        }
    }

    /// Applies the configure form (every field sent; an empty one goes back to the default), as `issues
    /// configure` does: a new keep prunes at once.
    static func configure(_ subscription: Subscription, form: [String: String], state: ServerState) async throws -> String {
        func text(_ name: String) -> String { (form[name] ?? "").trimmingCharacters(in: .whitespaces) }
        var change = SubscriptionChange(downloadsAutomatically: form["download"] == "1")
        let name = text("name")
        if !name.isEmpty, name != subscription.name { change.name = name }
        if text("keep").isEmpty {
            change.keep = .some(nil)
        } else {
            guard let keep = Int(text("keep")), keep >= 1 else {
                throw QueryError("keep must be a whole number of at least 1, not \(text("keep").debugDescription)")
            }
            change.keep = .some(keep)
        }
        if text("every").isEmpty {
            change.checkEvery = .some(nil)
        } else {
            guard let every = Duration(spanText: text("every")) else {
                throw QueryError("check every: \(text("every").debugDescription) is not a span such as 30m, 6h or 1d")
            }
            change.checkEvery = .some(every)
        }
        change.template = .some(text("template").isEmpty ? nil : try LayoutTemplate(text("template")))
        let changed = try await state.library.changeSubscription(named: subscription.name, change)
        var message = "saved \(changed.name)"
        if let keep = changed.keep, keep != subscription.keep {
            let pruned = try await state.library.prune(PrunePolicy(keep: keep, subscriptionID: changed.id))
            if !pruned.removed.isEmpty { message += "; removed \(pruned.removed.count) older issues" }
        }
        return message
    }

    /// Syncs (all subscriptions when `names` is nil) and downloads what the syncs add, in the background.
    static func syncInBackground(_ names: [String]?, state: ServerState) {
        let library = state.library
        let downloads = state.downloads
        let logger = state.logger
        downloads.start {
            do {
                let reports = try await library.sync(names)
                downloads.download(reports.filter(\.downloadsNewIssues).flatMap(\.keptIssues))
            } catch {
                logger.warning("sync failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
