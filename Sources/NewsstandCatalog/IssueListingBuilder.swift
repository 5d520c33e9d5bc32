import NewsstandCore

/// Builds a listing from rows given in the shelf's order (the catalog reads them sorted from its index on
/// `(day DESC, name)`), packing each into 32 bytes and its names into one buffer.
package struct IssueListingBuilder {
    private var names: [UInt8] = []
    private var rows: [PackedRow] = []

    /// Sized for about `lines` rows: what is not touched costs address space, not memory.
    package init(lines: Int) {
        names.reserveCapacity(lines * 40)
        rows.reserveCapacity(lines)
    }

    /// A row the listing cannot hold (a name past 4 GiB of names, a folder name past 64 KiB).
    package struct Unexpected: Error {}

    mutating func append(_ summary: IssueSummary) {
        let date = summary.date
        try? append(
            day: Int32(date.year * 10_000 + date.month * 100 + date.day), status: summary.status,
            assetsDone: summary.assetsDone, assetsTotal: summary.assetsTotal, bytes: summary.bytes,
            isPinned: summary.isPinned, isBeingRemoved: summary.isBeingRemoved,
            name: Array(summary.name.utf8), folder: Array(summary.folderName.utf8))
    }

    /// Appends one row; `name` and `folder` are UTF-8.
    mutating func append(
        day: Int32, status: Issue.Status, assetsDone: Int, assetsTotal: Int, bytes: Int64, isPinned: Bool,
        isBeingRemoved: Bool, name: some Collection<UInt8>, folder: some Collection<UInt8>
    ) throws {
        guard names.count <= Int(UInt32.max) - name.count - folder.count, folder.count <= Int(UInt16.max) else {
            throw Unexpected()
        }
        var row = PackedRow(
            bytes: bytes, nameStart: UInt32(names.count), nameCount: UInt32(name.count),
            assetsDone: UInt32(clamping: assetsDone), assetsTotal: UInt32(clamping: assetsTotal), day: day,
            folderCount: 0, status: status,
            flags: (isPinned ? PackedRow.pinned : 0) | (isBeingRemoved ? PackedRow.removing : 0))
        names.append(contentsOf: name)
        if folder.elementsEqual(name) {
            row.flags |= PackedRow.folderIsName
        } else {
            names.append(contentsOf: folder)
            row.folderCount = UInt16(folder.count)
        }
        rows.append(row)
    }

    /// The listing of the rows in the order they were appended.
    package consuming func listing() -> IssueListing {
        IssueListing(names: names, rows: rows, order: (0..<Int32(rows.count)).map { $0 }, status: nil)
    }
}
