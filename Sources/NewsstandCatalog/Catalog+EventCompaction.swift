// `O_RDONLY` and `close` through Glibc.
import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the event log bounded: ``appendEvents(_:)`` calls this when the log passes `eventLogBytes`.
extension Catalog {
    /// Rewrites the log keeping every event newer than `eventLogAge` among the last `eventLogCount`, every
    /// event some hook has not acknowledged yet, and always the last one (it carries the cursor on).
    ///
    /// Two passes over the lines, the kept ones copied as they are: decoding every event of the log held it
    /// several times over (events carry their issues' records; an import of 100,000 issues peaked 67 MiB lower
    /// without it, 1,043 → 976 MiB).
    func compactEvents() throws {
        let acknowledged = try hookPositions().min()
        let oldest = Date().addingTimeInterval(-eventLogAge)
        let path = layout.events
        guard let fd = try POSIX.openIfExists(path, O_RDONLY) else { return }
        defer { _ = close(fd) }
        var count = 0
        try LineFile.forEachLine(fd, path: path) { line, _ in if !line.isEmpty { count += 1 } }
        guard count > 0 else { return }
        let lastCursor = try lastEventCursor()
        let firstByCount = count - eventLogCount
        var index = 0
        var bytes: [UInt8] = []
        try LineFile.forEachLine(fd, path: path) { line, _ in
            guard !line.isEmpty else { return }
            defer { index += 1 }
            let byCount = index >= firstByCount
            let stamp = try Catalog.eventStamp(line, path: path, withTime: byCount)
            let unacknowledged = acknowledged.map { stamp.cursor > $0 } ?? false
            let recent = byCount && stamp.time >= oldest
            if unacknowledged || recent || stamp.cursor == lastCursor {
                bytes.append(contentsOf: line)
                bytes.append(0x0A)
            }
        }
        try AtomicFile.write(Data(bytes), to: path, durable: durable)
    }

    /// An event line's cursor and (when asked) time, read without decoding the rest; a line that is not an
    /// event gets ``CatalogEvent/decode(_:path:)``'s error.
    private static func eventStamp(
        _ line: UnsafeBufferPointer<UInt8>, path: String, withTime: Bool
    ) throws -> (cursor: Int64, time: Date) {
        var cursor: Int64?
        var time: Date?
        var reader = JSONReader(bytes: line)
        do {
            try reader.expect(UInt8(ascii: "{"))
            var first = true
            while cursor == nil || (withTime && time == nil), let key = try reader.nextKey(first: first) {
                first = false
                switch key {
                case "cursor":
                    if case .integer(let value) = try reader.readValue() { cursor = value }
                case "time" where withTime:
                    if case .string(let text) = try reader.readValue() {
                        time = try? Date(text, strategy: CatalogEvent.timeStyle)
                    }
                default:
                    try reader.skipValue()
                }
            }
        } catch is JSONSyntaxError {}
        guard let cursor, !withTime || time != nil else {
            _ = try CatalogEvent.decode(line, path: path)
            throw NewsstandError(.manifestUnreadable, "\(path) holds an event without a cursor or time")
        }
        return (cursor, time ?? .distantPast)
    }

    /// Every hook's last acknowledged cursor (``LibraryLayout/hookPosition(_:)``).
    package func hookPositions() throws -> [Int64] {
        let folder = layout.hookPositions
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return try names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap { name in
            try HookPosition.read(folder + "/" + name)?.cursor
        }
    }
}
