import NewsstandCore
import GRDB
import GRDBSQLite

/// Stepping a prepared statement through SQLite's C API, for the loops over every issue (`list` of 100,000):
/// each column read as an integer or as its bytes where SQLite holds them, with no value made per cell. GRDB's
/// row cursor made a `Data` per text column, and appending its bytes one at a time was a tenth of `list`.
enum SQLRows {
    /// One row, valid only inside the call that hands it out.
    struct Row {
        fileprivate let statement: OpaquePointer

        func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

        /// The column's UTF-8 bytes (empty for NULL).
        func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
            guard let start = sqlite3_column_text(statement, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(statement, column)))
        }
    }

    /// Steps `statement` (its arguments already set) to its end, calling `body` with each row.
    static func forEach(_ statement: Statement, _ db: Database, _ body: (Row) throws -> Void) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) }, sql: statement.sql)
            }
            try body(Row(statement: handle))
        }
    }
}

extension Issue.Status {
    /// The status whose raw value is these UTF-8 bytes (no string made).
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let status = Issue.Status.allCases.first(where: { $0.rawValue.utf8.elementsEqual(bytes) }) else { return nil }
        self = status
    }
}
