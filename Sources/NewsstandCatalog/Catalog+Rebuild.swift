import Foundation
import GRDB
import NewsstandCore

/// The way back from a lost or damaged database: what `verify --repair` does before it opens the library.
extension Catalog {
    /// Why the database cannot serve, or nil when it can (or the library is not version 4 yet, which opening
    /// upgrades): missing, not a database, or damaged past what `REINDEX` mends (which is tried first).
    package func databaseDamage() -> String? {
        guard case .current? = try? readMarker() else { return nil }
        guard POSIX.exists(layout.database) else { return "\(layout.database) is missing" }
        do {
            if try integrityProblems().isEmpty { return nil }
            try reindex()
            let left = try integrityProblems()
            return left.isEmpty ? nil : "\(layout.database) is damaged: \(left.prefix(3).joined(separator: "; "))"
        } catch let error as NewsstandError {
            // Without the advice to run the repair that is asking.
            return error.message.components(separatedBy: "; nothing was changed").first ?? error.message
        } catch {
            return "\(layout.database): \(error)"
        }
    }

    /// Replaces the database with a new one holding `issues` (their saved downloads queued again), after moving
    /// the old file and its WAL aside (`catalog.sqlite.damaged-TIME`: never deleted). Event cursors go on after
    /// every hook's position, so no hook takes a new event for one it acknowledged. Called with the lock held,
    /// on a catalog value that has not opened the old database.
    /// - Returns: Where the old file was moved, or nil when there was none.
    package func rebuild(from issues: [Issue]) throws -> String? {
        let stamp = Int(Date().timeIntervalSince1970)
        var kept: String?
        for path in CatalogUpgrade.databaseFiles(layout) where POSIX.linkStatus(path) != nil {
            let aside = path.replacingOccurrences(of: "catalog.sqlite", with: "catalog.sqlite.damaged-\(stamp)")
            try POSIX.rename(path, aside)
            if path == layout.database { kept = aside }
        }
        let floor = try hookPositions().max() ?? 0
        try fillNewDatabase { db in
            for var issue in issues {
                issue.updateStatus()
                let key = Catalog.key(for: issue.name)
                try CatalogRows.put(issue, key: key, db)
                for asset in issue.assets where asset.state == .downloading || asset.state == .failed {
                    try CatalogRows.markPending(asset.id, key: key, db)
                }
            }
            if floor > 0 {
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)", arguments: [floor])
            }
        }
        return kept
    }

    /// Creates the database (where none is), fills it in one transaction, then writes the version-4 marker: the
    /// commit of an upgrade or a rebuild. Called with the lock held.
    func fillNewDatabase(_ fill: (Database) throws -> Void) throws {
        try POSIX.makeDirectory(layout.catalog)
        let writer = try openDatabase(create: true)
        do {
            try writer.write { db in
                try fill(db)
                try CatalogRows.bumpGeneration(db)
            }
        } catch {
            throw CatalogDatabase.translate(error, path: layout.database)
        }
        CrashPoint.reached("upgrade-built")
        try writeMarker()
    }
}
