import Foundation
import Newsstand
import NewsstandCatalog
import NewsstandCore

/// A page of the shelf as the pages and `GET /api/issues` ask for it: filters, a search and a window.
struct ShelfQuery: Sendable, Hashable {
    static let defaultLimit = 48
    static let maxLimit = 200

    /// `pending`, `downloading`, `available`, `failed`, `new`, `read` or `pinned`.
    var status: String?
    var publication: String?
    var subscription: String?
    /// A case-insensitive part of the name.
    var search: String?
    var offset = 0
    var limit = ShelfQuery.defaultLimit

    /// The issue statuses (`none` is also accepted as `pending`), then the shelf's own badges.
    static let statuses = ["none", "pending", "downloading", "available", "failed", "new", "read", "pinned"]

    /// Reads the query string's parameters.
    /// - Throws: `QueryError` naming a bad parameter (answered 400).
    init(_ parameters: [String: String]) throws {
        func nonEmpty(_ key: String) -> String? {
            guard let value = parameters[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        status = nonEmpty("status")
        if let status, !Self.statuses.contains(status) {
            throw QueryError("status must be one of \(Self.statuses.joined(separator: ", ")), not \(status.debugDescription)")
        }
        publication = nonEmpty("publication")
        subscription = nonEmpty("subscription")
        search = nonEmpty("q")
        // Numbers given empty are refused, not taken as the default (the OpenAPI document says integer); the
        // shelf's own links leave them out instead.
        if let text = parameters["offset"] {
            guard let value = Int(text), value >= 0, value <= 100_000_000 else {
                throw QueryError("offset must be a whole number ≥ 0, not \(text.debugDescription)")
            }
            offset = value
        }
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...Self.maxLimit).contains(value) else {
                throw QueryError("limit must be a whole number from 1 to \(Self.maxLimit), not \(text.debugDescription)")
            }
            limit = value
        }
    }

    init() {}

    /// The query string that asks for this query at another offset.
    func queryString(offset: Int) -> String {
        var items: [(String, String)] = []
        if let status { items.append(("status", status)) }
        if let publication { items.append(("publication", publication)) }
        if let subscription { items.append(("subscription", subscription)) }
        if let search { items.append(("q", search)) }
        if offset > 0 { items.append(("offset", String(offset))) }
        if limit != Self.defaultLimit { items.append(("limit", String(limit))) }
        return items.map { "\(Form.encode($0.0))=\(Form.encode($0.1))" }.joined(separator: "&")
    }
}

/// A bad query parameter or form field: answered 400 with its text.
struct QueryError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One page of matching issues.
struct ShelfPage: Sendable {
    var issues: [Issue]
    var keys: [String]
    /// How many issues match in all.
    var total: Int
    var query: ShelfQuery
}

extension ShelfSnapshot {
    /// The issues of `query`'s page: positions are chosen from the index entries (and, for the publication
    /// and subscription filters, the cached facets); only the page's records are read. Blocking.
    func page(_ query: ShelfQuery, read: Set<String>) throws -> ShelfPage {
        let facets = query.publication != nil || query.subscription != nil ? try facets() : nil
        let needle = query.search.map { Array($0.lowercased().utf8) }
        let status = query.status.flatMap { Issue.Status(rawValue: $0 == "pending" ? "none" : $0) }
        func matches(_ position: Int) -> Bool {
            let entry = entries[position]
            if let status, entry.status != status { return false }
            switch query.status {
            case "new": if read.contains(names[position]) { return false }
            case "read": if !read.contains(names[position]) { return false }
            case "pinned": if !entry.isPinned { return false }
            default: break
            }
            if let facets {
                if let publication = query.publication, facets[position].publication != publication { return false }
                if let subscription = query.subscription, facets[position].subscription != subscription { return false }
            }
            if let needle, !names.name(at: position, containsLowercased: needle) { return false }
            return true
        }
        let filtered = query.status == nil && facets == nil && needle == nil
        var chosen: [Int] = []
        var total = 0
        if filtered {
            // No filter: the page is a slice, nothing is scanned.
            total = entries.count
            chosen = Array(entries.indices.dropFirst(query.offset).prefix(query.limit))
        } else {
            for position in entries.indices where matches(position) {
                if total >= query.offset && chosen.count < query.limit { chosen.append(position) }
                total += 1
            }
        }
        return ShelfPage(
            issues: try chosen.map { try record(at: $0) }, keys: chosen.map { key(at: $0) }, total: total,
            query: query)
    }
}
