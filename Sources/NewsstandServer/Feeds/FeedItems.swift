import Foundation
import Newsstand
import NewsstandCore

/// What a feed out says of one held issue: its main file (the first asset placed as a file, else the
/// first file of its folder) with size and type, as an enclosure or an acquisition link.
struct FeedItem: Sendable {
    var key: String
    var issue: Issue
    var file: (relative: String, length: Int64, type: String)?

    init(issue: Issue, key: String, directory: String) {
        self.key = key
        self.issue = issue
        let candidates = issue.assets.compactMap(\.fileName) + IssuePageView.files(of: issue, in: directory, limit: 50)
        for relative in candidates {
            let components = relative.split(separator: "/")
            if let path = SafePath.resolve(components, inside: directory),
                let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber
            {
                file = (relative, size.int64Value, ContentType.of(path: relative))
                break
            }
        }
    }

    /// RFC 822 date of the issue's day (midnight UTC), as RSS wants.
    var rfc822Date: String {
        HTTPDate.format(HTTPDate.daysFromCivil(year: issue.date.year, month: issue.date.month, day: issue.date.day) * 86_400)
    }

    var iso8601Date: String {
        String(format: "%04d-%02d-%02dT00:00:00Z", issue.date.year, issue.date.month, issue.date.day)
    }
}

extension ServerState {
    /// Held issues (available, with a file) matching `filter`, newest first, at most `limit`. Blocking.
    func feedItems(offset: Int = 0, limit: Int, where filter: (ShelfSnapshot.Facets) -> Bool = { _ in true }, filtered: Bool) throws -> (items: [FeedItem], total: Int) {
        let snapshot = try shelf.snapshot()
        let facets = filtered ? try snapshot.facets() : nil
        var items: [FeedItem] = []
        var total = 0
        for position in snapshot.entries.indices {
            if let facets, !filter(facets[position]) { continue }
            total += 1
            guard total > offset, items.count < limit else { continue }
            let issue = try snapshot.record(at: position)
            items.append(FeedItem(issue: issue, key: snapshot.key(at: position), directory: directory(of: issue)))
        }
        return (items, total)
    }
}
