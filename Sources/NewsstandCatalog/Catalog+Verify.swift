import Foundation
import GRDB
import NewsstandCore

/// What `verify` asks of the database.
extension Catalog {
    /// Every issue by key, decoded on up to `threads` threads: decoding is most of reading a whole catalog
    /// (`verify` at 100,000 issues).
    package func allRecords(threads: Int = ProcessInfo.processInfo.activeProcessorCount) throws -> [String: Issue] {
        var rows: [(key: String, record: [UInt8])] = []
        try forEachRecord { key, record in rows.append((key, Array(record))) }
        let stripes = try Stripes.map(count: rows.count, threads: threads) { [rows] indices in
            var found: [(String, Issue)] = []
            for index in indices {
                let (key, record) = rows[index]
                found.append((key, try record.withUnsafeBufferPointer { try IssueRecord.decode($0, path: recordPath(key)) }))
            }
            return found
        }
        var issues: [String: Issue] = [:]
        issues.reserveCapacity(rows.count)
        for stripe in stripes { for (key, issue) in stripe { issues[key] = issue } }
        return issues
    }

    /// What SQLite's `quick_check` finds wrong with the file (empty when nothing).
    package func integrityProblems() throws -> [String] {
        let found = try read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        return found == ["ok"] ? [] : found
    }

    /// Rebuilds every index of the database from its tables.
    func reindex() throws {
        try withLock { try transaction { db in try db.execute(sql: "REINDEX") } }
    }

    /// The keys of rows whose columns say something other than their record (`issues` by key), or that hold
    /// a key their record's name does not give.
    func keysWithStaleColumns(_ issues: [String: Issue]) throws -> [String] {
        try read { db in
            var stale: [String] = []
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT key, name, day, status, assets_done, assets_total, bytes, folder, folder_key, pinned,
                        removing, publication, subscription FROM issues
                    """)
            while let row = try rows.next() {
                let key: String = row[0]
                guard let issue = issues[key] else { continue }
                let summary = IssueSummary(issue)
                let date = issue.date
                let day = Int64(date.year * 10_000 + date.month * 100 + date.day)
                var same = Catalog.key(for: issue.name) == key
                same = same && (row[1] as String) == issue.name && (row[2] as Int64) == day
                same = same && (row[3] as String) == summary.status.rawValue
                same = same && (row[4] as Int) == summary.assetsDone && (row[5] as Int) == summary.assetsTotal
                same = same && (row[6] as Int64) == summary.bytes && (row[7] as String) == issue.folderName
                same = same && (row[8] as String) == Catalog.folderKey(issue.claimName)
                same = same && (row[9] as Bool) == issue.isPinned && (row[10] as Bool) == issue.isBeingRemoved
                same = same && (row[11] as String) == issue.publicationName
                same = same && (row[12] as String?) == issue.origin?.subscriptionID
                if !same { stale.append(key) }
            }
            return stale
        }
    }

    /// Writes each row again from its record, under its name's key (a row under another key moves there).
    func rewriteRows(_ rows: [(key: String, issue: Issue)]) throws {
        try transaction { db in
            for (key, issue) in rows {
                let expected = Catalog.key(for: issue.name)
                if key != expected { try db.execute(sql: "DELETE FROM issues WHERE key = ?", arguments: [key]) }
                try CatalogRows.put(issue, key: expected, db)
            }
            try CatalogRows.bumpGeneration(db)
        }
    }
}
