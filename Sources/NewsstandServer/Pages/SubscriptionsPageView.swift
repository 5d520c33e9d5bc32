import Foundation
import Newsstand

/// Subscriptions: add by URL or OPML, sync now, pause, configure, unsubscribe, last and next check.
enum SubscriptionsPageView {
    static func render(
        _ schedule: [(subscription: Subscription, plan: CheckPlan)], now: Date = Date(), message: String?, nonce: String,
        csrf: String
    ) -> String {
        let field = HTML.csrfField(csrf)
        let rows = schedule.map { subscription, plan in
            let id = HTML.escape(subscription.id)
            let checked = subscription.lastChecked.map {
                $0.formatted(Date.ISO8601FormatStyle().year().month().day().time(includingFractionalSeconds: false)) + " UTC"
            } ?? "never"
            let state = subscription.isGone ? "gone" : subscription.isPaused ? "paused" : "active"
            let pause = subscription.isPaused
                ? "<form method=\"post\" action=\"/subscriptions/\(id)/unpause\">\(field)<button type=\"submit\">Resume</button></form>"
                : "<form method=\"post\" action=\"/subscriptions/\(id)/pause\">\(field)<button type=\"submit\">Pause</button></form>"
            return """
                <li class="subscription" data-id="\(id)">\
                <a class="name" href="/?subscription=\(Form.encode(subscription.id))">\(HTML.escape(subscription.name))</a> \
                <span class="badge \(state)">\(state)</span>\
                <span class="url">\(HTML.escape(subscription.url.absoluteString))</span>\
                <span class="checked">last check: \(checked)\(subscription.lastOutcome.map { " (" + HTML.escape($0.description) + ")" } ?? "")</span>\
                <span class="next">next check: \(HTML.escape(nextCheck(plan, now: now)))</span>\
                <span class="links"><a href="/feeds/subscriptions/\(id).rss">RSS</a></span>\
                <span class="actions"><form method="post" action="/subscriptions/\(id)/sync">\(field)<button type="submit">Sync now</button></form>\(pause)\
                <a class="button danger" href="/subscriptions/\(id)/unsubscribe">Unsubscribe…</a></span>\
                \(configureForm(subscription, field: field))</li>
                """
        }.joined(separator: "\n")
        let body = """
            <h1>Subscriptions</h1>
            \(message.map { "<p class=\"notice\" role=\"status\">\(HTML.escape($0))</p>" } ?? "")
            <form class="add" method="post" action="/subscriptions">\(field)
            <label>Feed URL <input type="url" name="url" required placeholder="https://example.com/feed.xml"></label>
            <button type="submit">Subscribe</button>
            </form>
            <form class="sync-all" method="post" action="/subscriptions/sync">\(field)<button type="submit">Sync all now</button></form>
            <details><summary>Import OPML</summary>
            <form method="post" action="/subscriptions/opml">\(field)
            <label>OPML file <input type="file" id="opml-file" accept=".opml,.xml,text/xml,text/x-opml"></label>
            <label>OPML document <textarea name="opml" id="opml-text" rows="6" cols="60"></textarea></label>
            <button type="submit">Subscribe to all</button></form></details>
            <ul class="subscriptions">\(rows.isEmpty ? "<li>No subscriptions yet.</li>" : rows)</ul>
            """
        return HTML.page(title: "Subscriptions", nonce: nonce, csrf: csrf, current: "/subscriptions", body: body)
    }

    /// When and why the scheduler checks next: `in 2h 10m (every 6h (configured))`, `due now (never checked)`.
    static func nextCheck(_ plan: CheckPlan, now: Date) -> String {
        guard let due = plan.due else { return "none (\(plan.explanation))" }
        let when =
            due <= now ? "due now" : "in \(Duration.seconds(Int64(due.timeIntervalSince(now).rounded(.up))).shortText)"
        return "\(when) (\(plan.explanation))"
    }

    /// The options `issues configure` changes, filled in with the current ones; an empty field goes back to the
    /// default (keep every issue, adapt to the feed, the library's template).
    static func configureForm(_ subscription: Subscription, field: String) -> String {
        let id = HTML.escape(subscription.id)
        let every = subscription.checkEvery.map { HTML.escape($0.shortText) } ?? ""
        let template = subscription.template.map { HTML.escape($0.description) } ?? ""
        return """
            <details class="configure"><summary>Configure…</summary>\
            <form method="post" action="/subscriptions/\(id)/configure">\(field)\
            <label>Name <input type="text" name="name" required value="\(HTML.escape(subscription.name))"></label>\
            <label>Keep the newest <input type="number" name="keep" min="1" value="\(subscription.keep.map(String.init) ?? "")" \
            placeholder="all"> issues</label>\
            <label>Check every <input type="text" name="every" value="\(every)" placeholder="adapt to the feed" \
            pattern="[0-9smhd ]+" title="a span such as 30m, 6h, 1d or 1h30m"></label>\
            <label>File new issues as <input type="text" name="template" value="\(template)" \
            placeholder="the library's default"></label>\
            <label><input type="checkbox" name="download" value="1"\(subscription.downloadsAutomatically ? " checked" : "")> \
            Download new issues</label>\
            <button type="submit">Save</button></form></details>
            """
    }

    static func confirmUnsubscribe(_ subscription: Subscription, nonce: String, csrf: String) -> String {
        let id = HTML.escape(subscription.id)
        let body = """
            <h1>Unsubscribe from \(HTML.escape(subscription.name))?</h1>
            <form method="post" action="/subscriptions/\(id)/unsubscribe">\(HTML.csrfField(csrf))
            <label><input type="checkbox" name="removeIssues" value="1"> Also remove its issues</label>
            <button type="submit" class="danger">Unsubscribe</button> <a href="/subscriptions">Cancel</a></form>
            """
        return HTML.page(title: "Unsubscribe", nonce: nonce, csrf: csrf, current: "", body: body)
    }

    static func login(failed: Bool, nonce: String, csrf: String) -> String {
        let body = """
            <h1>Log in</h1>
            \(failed ? "<p class=\"error\" role=\"alert\">That token is not this library's.</p>" : "")
            <p>This server listens beyond this machine: give the token <code>issues serve</code> showed when it made it
            (it is in the library's <code>.serve-token</code> file).</p>
            <form method="post" action="/login">\(HTML.csrfField(csrf))
            <label>Token <input type="password" name="token" required autocomplete="current-password"></label>
            <button type="submit">Log in</button></form>
            """
        return HTML.page(title: "Log in", nonce: nonce, csrf: csrf, current: "", body: body)
    }
}
