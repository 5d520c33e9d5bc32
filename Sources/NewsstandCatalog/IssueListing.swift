import NewsstandCore

/// The summaries of a library's issues, newest date first, then by name (in the bytes of its UTF-8, which is
/// Unicode scalar order): what `list` shows, read from the catalog's index on `(day DESC, name)`.
///
/// Held compactly for the largest libraries: one fixed row of 32 bytes per issue and the names' bytes in one
/// buffer, no string per issue until one is asked for. At 1,000,000 issues an array of ``IssueSummary``
/// with its strings took 345 MiB; a whole `list` of them now peaks at 117 MiB.
public struct IssueListing: RandomAccessCollection, Sendable {
    /// What a row holds besides its strings.
    public struct Row: Sendable, Hashable {
        public var date: IssueDate
        public var status: Issue.Status
        public var assetsDone: Int
        public var assetsTotal: Int
        public var bytes: Int64
        public var isPinned: Bool
        public var isBeingRemoved: Bool
    }

    private var names: [UInt8]
    private var rows: [PackedRow]
    private var order: [Int32]
    /// Which rows are listed: those not removed, with this status when there is one.
    private var status: Issue.Status?

    init(names: [UInt8], rows: [PackedRow], order: [Int32], status: Issue.Status?) {
        self.names = names
        self.rows = rows
        self.order = order
        self.status = status
    }

    /// A listing of `summaries` in the order given (for issues chosen by what only their records say).
    public init(_ summaries: [IssueSummary]) {
        var builder = IssueListingBuilder(lines: summaries.count)
        for summary in summaries { builder.append(summary) }
        self = builder.listing()
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { order.count }

    public subscript(position: Int) -> IssueSummary {
        let row = self.row(at: position)
        let packed = rows[Int(order[position])]
        let name = withUTF8Name(at: position) { String(decoding: $0, as: UTF8.self) }
        let folder =
            packed.folderIsName ? name : withUTF8FolderName(at: position) { String(decoding: $0, as: UTF8.self) }
        return IssueSummary(
            name: name, date: row.date, status: row.status, assetsDone: row.assetsDone, assetsTotal: row.assetsTotal,
            bytes: row.bytes, folderName: folder, isBeingRemoved: row.isBeingRemoved, isPinned: row.isPinned)
    }

    /// Calls `body` with each row in order, with the UTF-8 of its name and of its content folder's name: the
    /// way to write many rows (one call, no string made per row).
    /// - Parameter sorted: False for the rows in the order they are stored: for a pass that only totals or
    ///   measures, which then reads memory in order (at 1,000,000 rows, several times faster).
    public func forEachRow(
        sorted: Bool = true,
        _ body: (_ row: Row, _ name: UnsafeBufferPointer<UInt8>, _ folder: UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        try rows.withUnsafeBufferPointer { rows in
            try names.withUnsafeBufferPointer { names in
                func visit(_ packed: PackedRow) throws {
                    let nameStart = Int(packed.nameStart)
                    let name = UnsafeBufferPointer(rebasing: names[nameStart..<(nameStart + Int(packed.nameCount))])
                    let folderStart = packed.folderIsName ? nameStart : nameStart + Int(packed.nameCount)
                    let folderCount = packed.folderIsName ? Int(packed.nameCount) : Int(packed.folderCount)
                    try body(
                        packed.row, name,
                        UnsafeBufferPointer(rebasing: names[folderStart..<(folderStart + folderCount)]))
                }
                guard sorted else {
                    for packed in rows where packed.flags & PackedRow.removed == 0 {
                        if let status, packed.status != status { continue }
                        try visit(packed)
                    }
                    return
                }
                for index in order { try visit(rows[Int(index)]) }
            }
        }
    }

    /// The row at `position` without its strings.
    public func row(at position: Int) -> Row { rows[Int(order[position])].row }

    /// Calls `body` with the UTF-8 of the name at `position` (no string made: `list` writes a million of them).
    public func withUTF8Name<R>(at position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let packed = rows[Int(order[position])]
        return try names.withUnsafeBufferPointer {
            try body(
                UnsafeBufferPointer(
                    rebasing: $0[Int(packed.nameStart)..<(Int(packed.nameStart) + Int(packed.nameCount))]))
        }
    }

    /// Calls `body` with the UTF-8 of the content folder's name at `position`.
    public func withUTF8FolderName<R>(at position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    {
        let packed = rows[Int(order[position])]
        let start = Int(packed.nameStart) + (packed.folderIsName ? 0 : Int(packed.nameCount))
        let count = packed.folderIsName ? Int(packed.nameCount) : Int(packed.folderCount)
        return try names.withUnsafeBufferPointer {
            try body(UnsafeBufferPointer(rebasing: $0[start..<(start + count)]))
        }
    }
}

/// One issue's row, 32 bytes: where its name and folder are in the names' buffer, and the fields `list` shows.
struct PackedRow: Sendable {
    var bytes: Int64
    var nameStart: UInt32
    var nameCount: UInt32
    var assetsDone: UInt32
    var assetsTotal: UInt32
    /// year × 10,000 + month × 100 + day: sorts as the date does.
    var day: Int32
    var folderCount: UInt16
    var status: Issue.Status
    var flags: UInt8

    static let pinned: UInt8 = 1
    static let removing: UInt8 = 2
    static let removed: UInt8 = 4
    static let folderIsName: UInt8 = 8

    var folderIsName: Bool { flags & Self.folderIsName != 0 }
    var row: IssueListing.Row {
        IssueListing.Row(
            date: date, status: status, assetsDone: Int(assetsDone), assetsTotal: Int(assetsTotal), bytes: bytes,
            isPinned: flags & Self.pinned != 0, isBeingRemoved: flags & Self.removing != 0)
    }
    var date: IssueDate {
        let value = Int(day)
        // Packed from a date checked when parsed.
        return IssueDate(uncheckedYear: value / 10_000, month: value / 100 % 100, day: value % 100)
    }
}
