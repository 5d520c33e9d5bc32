internal import CSystemShims
import Foundation
import GRDB
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Opening the catalog's SQLite database (`.catalog/catalog.sqlite`) with GRDB.
///
/// GRDB over a module of our own: it builds and runs on Linux against Debian's `libsqlite3`, gives pooled
/// WAL readers beside one writer, busy handling and `DatabaseMigrator`, and its row cursors read columns
/// straight from the statement (`list` of 100,000 issues in the README's table).
///
/// On a local disk the database is in WAL mode (``DatabasePool``): readers never wait for a writer, and
/// several `issues` processes share it. WAL needs shared memory between them, which a network file system
/// (NFS, SMB/CIFS, FUSE, 9p) does not give; there the database keeps SQLite's rollback journal and its POSIX
/// locks (``DatabaseQueue``, journal mode DELETE). `ISSUES_CATALOG_JOURNAL=delete` asks for the same on any disk.
enum CatalogDatabase {
    /// Opens (creating when `create`) the database at `path`.
    /// - Parameter durable: Each commit flushed (`synchronous = FULL`) before it returns.
    /// - Throws: `.manifestUnreadable` naming the file when it is not a database or is damaged.
    static func open(path: String, durable: Bool, create: Bool) throws -> any DatabaseWriter {
        if !create, !POSIX.exists(path) {
            throw NewsstandError(.manifestUnreadable, "\(path) is missing; run `issues verify --repair` to rebuild it from the issues' issue.json manifests")
        }
        var configuration = Configuration()
        configuration.label = "catalog"
        // Writers queue behind each other across processes; a minute covers an import's one transaction.
        configuration.busyMode = .timeout(60)
        configuration.maximumReaderCount = 4
        let rollbackJournal = usesRollbackJournal(folder: (path as NSString).deletingLastPathComponent)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(durable ? "FULL" : "OFF")")
            // The WAL is cut back to 4 MiB after a checkpoint: an import's does not stay hundreds of MiB.
            try db.execute(sql: "PRAGMA journal_size_limit = 4194304")
            if rollbackJournal { try db.execute(sql: "PRAGMA journal_mode = DELETE") }
        }
        do {
            let writer: any DatabaseWriter =
                rollbackJournal
                ? try DatabaseQueue(path: path, configuration: configuration)
                : try DatabasePool(path: path, configuration: configuration)
            try CatalogSchema.migrator.migrate(writer)
            return writer
        } catch {
            throw translate(error, path: path)
        }
    }

    /// Whether the folder is on a file system where WAL's shared memory does not work, or the user asked for
    /// the rollback journal.
    static func usesRollbackJournal(folder: String) -> Bool {
        if let asked = ProcessInfo.processInfo.environment["ISSUES_CATALOG_JOURNAL"] { return asked.lowercased() == "delete" }
        var info = statfs()
        guard statfs(folder, &info) == 0 else { return false }
        // NFS, SMB, CIFS, SMB2, FUSE, 9p (linux/magic.h).
        let networked: Set<Int64> = [0x6969, 0x517B, 0xFF53_4D42, 0xFE53_4D42, 0x6573_5546, 0x0102_1997]
        return networked.contains(Int64(info.f_type) & 0xFFFF_FFFF)
    }

    /// A database error as the library's: a damaged or foreign file names itself and the way back.
    static func translate(_ error: any Error, path: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        switch error.resultCode.primaryResultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return NewsstandError(
                .manifestUnreadable,
                "\(path) is damaged (\(error.message ?? "\(error.resultCode)")); nothing was changed: run `issues verify --repair` to rebuild it from the issues' issue.json manifests",
                underlying: error)
        case .SQLITE_FULL:
            return NewsstandError(.diskFull, "\(path): the disk is full; nothing was changed", underlying: error)
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_IOERR:
            return NewsstandError(
                .io, "\(path) cannot be written (\(error.message ?? "\(error.resultCode)"))", underlying: error)
        default:
            return NewsstandError(
                .manifestUnreadable, "\(path): \(error.message ?? "\(error.resultCode)")", underlying: error)
        }
    }
}

/// The catalog's tables, by migrations: each version of the schema is one migration from the one before,
/// so a database made by any earlier release is brought up to date when this one opens it.
enum CatalogSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // One row per issue: its record as JSON (what `jq` and `json_extract` read), and the fields that
            // `list`, the shelf and the folder check read without decoding it, kept by the one writer of rows
            // (`CatalogRows.put`). `day` is YYYYMMDD; `folder_key` the case-folded key of the folder it claims.
            try db.execute(
                sql: """
                    CREATE TABLE issues (
                        key TEXT NOT NULL UNIQUE,
                        name TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        status TEXT NOT NULL,
                        assets_done INTEGER NOT NULL,
                        assets_total INTEGER NOT NULL,
                        bytes INTEGER NOT NULL,
                        folder TEXT NOT NULL,
                        folder_key TEXT NOT NULL,
                        pinned INTEGER NOT NULL,
                        removing INTEGER NOT NULL,
                        publication TEXT NOT NULL,
                        subscription TEXT,
                        record TEXT NOT NULL
                    );
                    CREATE INDEX issues_shelf ON issues (
                        day DESC, name, status, assets_done, assets_total, bytes, folder, pinned, removing);
                    CREATE INDEX issues_folder ON issues (folder_key);
                    CREATE TABLE pending (
                        asset_id TEXT NOT NULL PRIMARY KEY,
                        issue_key TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE events (
                        cursor INTEGER PRIMARY KEY AUTOINCREMENT,
                        time REAL NOT NULL,
                        event TEXT NOT NULL
                    );
                    CREATE TABLE file_intents (
                        path TEXT NOT NULL PRIMARY KEY,
                        digest TEXT NOT NULL,
                        events TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE meta (
                        key TEXT NOT NULL PRIMARY KEY,
                        value INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    INSERT INTO meta (key, value) VALUES ('generation', 0);
                    """)
        }
        return migrator
    }
}
