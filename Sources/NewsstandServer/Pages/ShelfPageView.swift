import Foundation
import Newsstand

/// The shelf: covers newest first, with badges, filters, a search and pages.
enum ShelfPageView {
    static func render(
        _ page: ShelfPage, read: Set<String>, subscriptions: [Subscription], progress: [String: (Int64, Int64?)],
        cursor: Int64, nonce: String, csrf: String
    ) -> String {
        let query = page.query
        let statusOptions = ["": "Any status", "new": "New", "read": "Read", "pinned": "Pinned", "pending": "Pending",
            "downloading": "Downloading", "available": "Available", "failed": "Failed"]
        let statusOrder = ["", "new", "read", "pinned", "pending", "downloading", "available", "failed"]
        let statusSelect = statusOrder.map { value in
            "<option value=\"\(value)\"\(query.status == value || (query.status == nil && value.isEmpty) ? " selected" : "")>\(statusOptions[value] ?? value)</option>"
        }.joined()
        let subscriptionSelect = (["<option value=\"\">Any subscription</option>"] + subscriptions.map { subscription in
            "<option value=\"\(HTML.escape(subscription.id))\"\(query.subscription == subscription.id ? " selected" : "")>\(HTML.escape(subscription.name))</option>"
        }).joined()
        let cards = zip(page.issues, page.keys).map { issue, key in
            card(issue, key: key, isRead: read.contains(issue.name), progress: progress)
        }.joined(separator: "\n")
        let first = page.total == 0 ? 0 : query.offset + 1
        let last = query.offset + page.issues.count
        var pager = ""
        if query.offset > 0 {
            pager += "<a rel=\"prev\" href=\"/?\(query.queryString(offset: max(0, query.offset - query.limit)))\">← Newer</a>"
        }
        if last < page.total {
            pager += "<a rel=\"next\" href=\"/?\(query.queryString(offset: query.offset + query.limit))\">Older →</a>"
        }
        // New issues are added live to the first page; the script compares each with the page's filters
        // (the same tests as the server's, on the event's report), so a filtered shelf gains only its own.
        let live = query.offset == 0
        let filters = [
            ("status", query.status), ("publication", query.publication), ("subscription", query.subscription),
            ("q", query.search),
        ].compactMap { name, value in value.map { " data-filter-\(name)=\"\(HTML.escape($0))\"" } }.joined()
        let body = """
            <h1>Shelf</h1>
            <form class="filters" method="get" action="/" role="search">
            <label>Name <input type="search" name="q" value="\(HTML.escape(query.search ?? ""))"></label>
            <label>Status <select name="status">\(statusSelect)</select></label>
            <label>Publication <input type="text" name="publication" value="\(HTML.escape(query.publication ?? ""))"></label>
            <label>Subscription <select name="subscription">\(subscriptionSelect)</select></label>
            <button type="submit">Filter</button>
            </form>
            <p class="count" id="count" data-total="\(page.total)" data-last="\(last)">\(page.total == 0 ? "No issues" : "\(first)–\(last) of \(page.total) issue\(page.total == 1 ? "" : "s")")</p>
            <ul class="shelf" id="shelf" data-live="\(live ? "1" : "0")"\(filters) data-cursor="\(cursor)">
            \(cards)
            </ul>
            <nav class="pager" aria-label="Pages">\(pager)</nav>
            """
        return HTML.page(title: "Shelf", nonce: nonce, csrf: csrf, current: "/", body: body)
    }

    /// One issue's card; the script builds the same markup for an issue that arrives live.
    static func card(_ issue: Issue, key: String, isRead: Bool, progress: [String: (Int64, Int64?)]) -> String {
        let name = HTML.escape(issue.name)
        var badges: [String] = []
        if !isRead { badges.append("<span class=\"badge new\">new</span>") }
        if issue.isPinned { badges.append("<span class=\"badge pinned\">pinned</span>") }
        switch issue.status {
        case .downloading: badges.append("<span class=\"badge downloading\">downloading</span>")
        case .failed: badges.append("<span class=\"badge failed\">failed</span>")
        case .none: badges.append("<span class=\"badge pending\">pending</span>")
        case .available: break
        }
        var bar = ""
        if issue.status == .downloading || progress[key] != nil {
            let (received, expected) = progress[key] ?? (issue.assets.reduce(0) { $0 + $1.receivedBytes }, nil)
            let max = expected ?? issue.assets.reduce(Int64(0)) { $0 + ($1.expectedBytes ?? 0) }
            bar = "<progress aria-label=\"Download of \(name)\" value=\"\(received)\" max=\"\(Swift.max(max, 1))\"></progress>"
        }
        return """
            <li class="card" data-key="\(key)" data-status="\(issue.status.rawValue)">\
            <a class="cover" href="/issues/\(key)" tabindex="-1" aria-hidden="true"><img src="/covers/\(key)" alt="" width="128" height="170" loading="lazy"></a>\
            <div class="meta"><a class="name" href="/issues/\(key)">\(name)</a>\
            <span class="date">\(issue.date.description)</span>\
            <span class="pub">\(HTML.escape(issue.publicationName))</span>\
            <span class="badges">\(badges.joined())</span>\(bar)</div></li>
            """
    }
}
