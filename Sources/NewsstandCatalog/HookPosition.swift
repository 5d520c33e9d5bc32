import Foundation
import NewsstandCore

/// How far one hook has got: its last acknowledged cursor, and while an event keeps failing, when it
/// first failed, how often, and when to try again. Kept durably (AtomicFile) after each acknowledgement.
package struct HookPosition: Sendable, Hashable {
    package var cursor: Int64
    package var failures: Int = 0
    package var firstFailure: Date?
    package var retryAt: Date?

    package init(cursor: Int64) { self.cursor = cursor }

    /// - Throws: `.manifestUnreadable` naming the file when it is not a position.
    package static func read(_ path: String) throws -> HookPosition? {
        guard let data = try AtomicFile.read(path) else { return nil }
        do {
            let value = try data.withUnsafeBytes { try JSONReader.parse($0.bindMemory(to: UInt8.self)) }
            guard case .object(let object) = value, case .integer(let cursor)? = object["cursor"] else {
                throw CatalogShapeError("no cursor")
            }
            var position = HookPosition(cursor: cursor)
            if case .integer(let failures)? = object["failures"] { position.failures = Int(failures) }
            if case .double(let time)? = object["firstFailure"] { position.firstFailure = Date(timeIntervalSince1970: time) }
            if case .integer(let time)? = object["firstFailure"] { position.firstFailure = Date(timeIntervalSince1970: Double(time)) }
            if case .double(let time)? = object["retryAt"] { position.retryAt = Date(timeIntervalSince1970: time) }
            if case .integer(let time)? = object["retryAt"] { position.retryAt = Date(timeIntervalSince1970: Double(time)) }
            return position
        } catch {
            throw NewsstandError(
                .manifestUnreadable, "\(path) is not a hook position (\(error)); it was left untouched", underlying: error)
        }
    }

    /// Writes it atomically and durably.
    package func write(_ path: String) throws {
        var w = JSONWriter()
        w.raw("{\"cursor\":")
        w.integer(cursor)
        w.key("failures")
        w.integer(Int64(failures))
        if let firstFailure {
            w.key("firstFailure")
            w.integer(Int64(firstFailure.timeIntervalSince1970))
        }
        if let retryAt {
            w.key("retryAt")
            w.integer(Int64(retryAt.timeIntervalSince1970.rounded(.up)))
        }
        w.raw("}\n")
        try POSIX.makeDirectory((path as NSString).deletingLastPathComponent)
        try AtomicFile.write(Data(w.bytes), to: path)
    }
}
