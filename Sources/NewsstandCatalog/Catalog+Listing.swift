import Foundation
import GRDB
import NewsstandCore

/// Reading many issues at once: what `list`, `list --json`, `export`, `prune` and the shelf read, each from one
/// snapshot of the catalog.
extension Catalog {
    /// The issues with `status` (all when nil), newest first then by name, read from the index on
    /// `(day DESC, name, …)` alone (no record is decoded).
    package func listing(status: Issue.Status? = nil) throws -> IssueListing {
        try read { db in
            let count = try CatalogRows.count(db)
            var builder = IssueListingBuilder(lines: status == nil ? count : count / 2)
            let filter = status == nil ? "" : "WHERE status = ?"
            let statement = try db.makeStatement(
                sql: """
                    SELECT day, status, assets_done, assets_total, bytes, pinned, removing, name, folder
                    FROM issues INDEXED BY issues_shelf \(filter) ORDER BY day DESC, name
                    """)
            if let status { try statement.setArguments([status.rawValue]) }
            try SQLRows.forEach(statement, db) { row in
                guard let rowStatus = Issue.Status(utf8: row.text(1)) else {
                    throw NewsstandError(
                        .manifestUnreadable,
                        "\(layout.database) holds an issue with status \(String(decoding: row.text(1), as: UTF8.self).debugDescription); run `issues verify --repair`")
                }
                try builder.append(
                    day: Int32(truncatingIfNeeded: row.int(0)), status: rowStatus, assetsDone: Int(row.int(2)),
                    assetsTotal: Int(row.int(3)), bytes: row.int(4), isPinned: row.int(5) != 0,
                    isBeingRemoved: row.int(6) != 0, name: row.text(7), folder: row.text(8))
            }
            return builder.listing()
        }
    }

    /// Calls `body` with each issue's key and record (its JSON's bytes), newest first then by name, with
    /// `status` when given, leaving out issues being removed when `live`; from one snapshot.
    package func forEachRecord(
        status: Issue.Status? = nil, live: Bool = false,
        _ body: (_ key: String, _ record: UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        try read { db in try CatalogRows.forEachRecord(status: status, live: live, db, body) }
    }

    /// Every issue with `status` (all when nil), decoded, newest first then by name.
    package func issues(status: Issue.Status? = nil, live: Bool = false) throws -> [Issue] {
        var issues: [Issue] = []
        try forEachRecord(status: status, live: live) { key, record in
            issues.append(try IssueRecord.decode(record, path: recordPath(key)))
        }
        return issues
    }

    /// The keys of the issues not being removed whose status is not `status`, in the order they were added.
    package func issueKeys(excluding status: Issue.Status) throws -> [String] {
        try read { db in
            try String.fetchAll(
                db, sql: "SELECT key FROM issues WHERE status <> ? AND removing = 0 ORDER BY rowid",
                arguments: [status.rawValue])
        }
    }

    /// The saved list of pending downloads: asset identifier → issue key, by identifier.
    package func pendingMarkers() throws -> [(id: String, key: String)] {
        try read { db in try CatalogRows.pending(db) }
    }
}

extension Catalog {
    /// What the served shelf keeps of an issue.
    package struct ShelfRow {
        package var day: Int32
        package var status: Issue.Status
        package var isPinned: Bool
        package var name: String
        package var publication: String
        package var subscription: String?
    }

    /// Calls `body` with each issue's shelf row, newest first then by name, from one snapshot.
    /// - Returns: The catalog's generation in that snapshot.
    package func forEachShelfRow(_ body: (ShelfRow) throws -> Void) throws -> Int64 {
        try read { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT day, status, pinned, name, publication, subscription FROM issues ORDER BY day DESC, name")
            while let row = try rows.next() {
                let statusText: String = row[1]
                try body(
                    ShelfRow(
                        day: Int32(truncatingIfNeeded: row[0] as Int64), status: Issue.Status(rawValue: statusText) ?? .none,
                        isPinned: row[2], name: row[3], publication: row[4], subscription: row[5]))
            }
            return try CatalogRows.generation(db)
        }
    }
}
