import Foundation
import NewsstandCore

/// The one way a report becomes text: sorted keys (stable for diffs and tests), no escaped slashes in URLs,
/// pretty-printed for the objects a person reads. `list --json` is the one exception, written by hand
/// from the stored records (see `Library.writeJSONList`).
public enum ReportJSON: Sendable {
    /// The report as JSON text; `compact` gives one line (for JSON Lines and events).
    public static func text(_ report: some Encodable, compact: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = compact ? [.sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
