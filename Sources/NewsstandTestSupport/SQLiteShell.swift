import Foundation

/// The `sqlite3` shell (Debian's `sqlite3`, which `make test-deps` installs), run on a catalog database as a
/// person would: to read its JSON records, or to damage them on purpose.
public enum SQLiteShell {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `sql` on the database at `path` and returns what the shell printed (one line a row, `|` between
    /// columns). Throws with the shell's error text when it exits non-zero.
    @discardableResult
    public static func run(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-bail", path, sql]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let error = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "sqlite3 \(sql): \(String(decoding: error, as: UTF8.self))")
        }
        return String(decoding: text, as: UTF8.self)
    }
}
