import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// Builds a listing from summary lines and index lines (the same members before the record), newest line
/// for a key winning. Lines are parsed by position, in the order the catalog writes their members; an index
/// line in another order goes through the general parser.
package struct IssueListingBuilder {
    private var names: [UInt8] = []
    private var rows: [PackedRow] = []
    /// Each row's key, to find the row again when a later line changes it (apart from the rows, and dropped
    /// before the sort: at 1,000,000 issues, 16 MiB).
    private var keys: [RowKey] = []
    /// The first row added by a line that may repeat a key: rows before it came from the part of the file that
    /// its last rewrite wrote, one line per issue, and are never looked up while lines are added.
    private var tailStart: Int?
    /// Open addressing from a key to its row, for the rows from `tailStart` on: row + 1 in the low 32 bits
    /// (0: empty), 32 more bits of the key in the high ones, so that a probe past another key's slot does not
    /// read that key.
    private var slots = [UInt64](repeating: 0, count: 1024)
    private var live = 0

    /// Sized for about `lines` lines: what is not touched costs address space, not memory.
    package init(lines: Int) {
        names.reserveCapacity(lines * 40)
        rows.reserveCapacity(lines)
        keys.reserveCapacity(lines)
    }

    /// The line is not one this reader parses by position.
    package struct Unexpected: Error {}

    /// What one issue line says.
    private enum Parsed {
        case issue(PackedRow, RowKey)
        case removed(RowKey)
    }

    /// Adds one summary line of an issue or a removal (its `"end":N}` read by the caller).
    /// - Parameter unique: The line is in the part of the file its last rewrite wrote (no key twice there).
    package mutating func addSummaryLine(_ line: UnsafeBufferPointer<UInt8>, unique: Bool) throws {
        var cursor = IssueLineCursor(line)
        let parsed = try parse(&cursor)
        if cursor.skip(#","at":"#) { _ = try cursor.integer() }
        try cursor.expect(#","end":"#)
        _ = try cursor.integer()
        try cursor.expect("}")
        guard cursor.atEnd else { throw Unexpected() }
        add(parsed, unique: unique)
    }

    /// Adds one index line (its header is skipped).
    /// - Parameter unique: The line is in the part of the file its last rewrite wrote (no key twice there).
    package mutating func addIndexLine(_ line: UnsafeBufferPointer<UInt8>, offset: Int, unique: Bool) throws {
        var cursor = IssueLineCursor(line)
        if cursor.skip(#"{"index""#) { return }
        let parsed: Parsed
        let namesBefore = names.count
        if let positional = try? parse(&cursor), (try? cursor.expectEnd(#","issue":"#, orRemoval: true)) != nil {
            parsed = positional
        } else {
            names.removeSubrange(namesBefore...)  // what the positional parse appended before it gave up
            switch try CatalogIndex.parse(line, offset: offset) {
            case .header: return
            case .removed(let key): parsed = .removed(RowKey(high: key.high, low: key.low))
            case .issue(let entry):
                guard let row = packed(entry.summary) else { throw Unexpected() }
                parsed = .issue(row, RowKey(high: entry.key.high, low: entry.key.low))
            }
        }
        add(parsed, unique: unique)
    }

    private mutating func add(_ parsed: Parsed, unique: Bool) {
        switch parsed {
        case .issue(let row, let key) where unique && tailStart == nil:
            rows.append(row)
            keys.append(key)
            live += 1
        case .issue(let row, let key): put(row, key)
        case .removed(let key): remove(key)
        }
    }

    /// Appends a summary as a row of its own (no key: ``IssueListing/init(_:)``).
    mutating func append(_ summary: IssueSummary) {
        guard let row = packed(summary) else { return }
        rows.append(row)
        keys.append(RowKey(high: 0, low: 0))
        live += 1
    }

    private mutating func packed(_ summary: IssueSummary) -> PackedRow? {
        var row = PackedRow(
            bytes: summary.bytes, nameStart: 0, nameCount: 0,
            assetsDone: UInt32(clamping: summary.assetsDone), assetsTotal: UInt32(clamping: summary.assetsTotal),
            day: Int32(summary.date.year * 10_000 + summary.date.month * 100 + summary.date.day), folderCount: 0,
            status: summary.status,
            flags: (summary.isPinned ? PackedRow.pinned : 0) | (summary.isBeingRemoved ? PackedRow.removing : 0))
        guard
            (try? appendNames(name: Array(summary.name.utf8), folder: Array(summary.folderName.utf8), to: &row)) != nil
        else { return nil }
        return row
    }

    /// The listing of the live issues with `status` (all when nil), sorted unless `sorted` is false.
    package consuming func listing(status: Issue.Status?, sorted: Bool = true) -> IssueListing {
        supersedeUniqueRows()
        // The keys are done with: freed before the sort's keys are made (at 1,000,000 issues, 16 MiB).
        slots = []
        keys = []
        var order: [Int32] = []
        order.reserveCapacity(status == nil ? live : live / 2)
        rows.withUnsafeBufferPointer { rows in
            for index in rows.indices where rows[index].flags & PackedRow.removed == 0 {
                if let status, rows[index].status != status { continue }
                order.append(Int32(index))
            }
        }
        guard sorted else { return IssueListing(names: names, rows: rows, order: order, status: status) }
        // Sorted as keys of 24 bytes (the day, the name's first 16 bytes, the row), read in order, instead of rows
        // reached at random: the names are compared whole only when their first 16 bytes tie (8 tied often: names
        // of one day start with the same publication; at 1,000,000 issues `memcmp` was then 7 % of `list`).
        var keys = [SortKey]()
        keys.reserveCapacity(order.count)
        rows.withUnsafeBufferPointer { rows in
            names.withUnsafeBufferPointer { names in
                for index in order {
                    let row = rows[Int(index)]
                    var prefix: (UInt64, UInt64) = (0, 0)
                    let start = Int(row.nameStart)
                    let count = Int(row.nameCount)
                    for offset in 0..<8 {
                        prefix.0 <<= 8
                        prefix.1 <<= 8
                        if offset < count { prefix.0 |= UInt64(names[start + offset]) }
                        if offset + 8 < count { prefix.1 |= UInt64(names[start + offset + 8]) }
                    }
                    keys.append(SortKey(prefix: prefix.0, prefix2: prefix.1, day: row.day, row: index))
                }
                guard let base = names.baseAddress else { return }
                keys.sort { a, b in
                    if a.day != b.day { return a.day > b.day }
                    if a.prefix != b.prefix { return a.prefix < b.prefix }
                    if a.prefix2 != b.prefix2 { return a.prefix2 < b.prefix2 }
                    let left = rows[Int(a.row)]
                    let right = rows[Int(b.row)]
                    let common = Int(min(left.nameCount, right.nameCount))
                    let compared = memcmp(base + Int(left.nameStart), base + Int(right.nameStart), common)
                    return compared != 0 ? compared < 0 : left.nameCount < right.nameCount
                }
            }
        }
        for (position, key) in keys.enumerated() { order[position] = key.row }
        return IssueListing(names: names, rows: rows, order: order, status: status)
    }

    // MARK: - Parsing by position

    /// Reads the members every issue line starts with, up to the record or the summary's own members. The
    /// names are appended to the names' buffer.
    private mutating func parse(_ cursor: inout IssueLineCursor) throws -> Parsed {
        try cursor.expect(#"{"key":""#)
        let (high, low) = try cursor.key()
        try cursor.expect("\"")
        if cursor.skip(#","removed":true"#) { return .removed(RowKey(high: high, low: low)) }
        try cursor.expect(#","name":"#)
        let key = RowKey(high: high, low: low)
        var row = PackedRow(
            bytes: 0, nameStart: 0, nameCount: 0, assetsDone: 0, assetsTotal: 0, day: 0,
            folderCount: 0, status: .none, flags: 0)
        let nameStart = names.count
        try cursor.string(into: &names)
        let nameCount = names.count - nameStart
        try cursor.expect(#","date":""#)
        row.day = try cursor.date()
        try cursor.expect(#"","status":""#)
        row.status = try cursor.status()
        try cursor.expect(#"","done":"#)
        row.assetsDone = UInt32(clamping: try cursor.integer())
        try cursor.expect(#","total":"#)
        row.assetsTotal = UInt32(clamping: try cursor.integer())
        try cursor.expect(#","bytes":"#)
        row.bytes = try cursor.integer()
        try cursor.expect(#","folder":"#)
        let folderStart = names.count
        try cursor.string(into: &names)
        let folderCount = names.count - folderStart
        if cursor.skip(#","removing":true"#) { row.flags |= PackedRow.removing }
        if cursor.skip(#","pinned":true"#) { row.flags |= PackedRow.pinned }
        guard nameStart <= Int(UInt32.max) - nameCount - folderCount, folderCount <= Int(UInt16.max) else {
            throw Unexpected()
        }
        row.nameStart = UInt32(nameStart)
        row.nameCount = UInt32(nameCount)
        let same =
            folderCount == nameCount
            && names.withUnsafeBufferPointer {
                guard let base = $0.baseAddress else { return true }  // both empty
                return memcmp(base + nameStart, base + folderStart, nameCount) == 0
            }
        if same {
            row.flags |= PackedRow.folderIsName
            names.removeLast(folderCount)
        } else {
            row.folderCount = UInt16(folderCount)
        }
        return .issue(row, key)
    }

    private mutating func appendNames(name: [UInt8], folder: [UInt8], to row: inout PackedRow) throws {
        guard names.count <= Int(UInt32.max) - name.count - folder.count, folder.count <= Int(UInt16.max) else {
            throw Unexpected()
        }
        row.nameStart = UInt32(names.count)
        row.nameCount = UInt32(name.count)
        names += name
        if folder == name {
            row.flags |= PackedRow.folderIsName
        } else {
            names += folder
            row.folderCount = UInt16(folder.count)
        }
    }

    // MARK: - Keys

    /// Adds or replaces the row of `key`, looked up among the rows from `tailStart` on.
    private mutating func put(_ row: PackedRow, _ key: RowKey) {
        if tailStart == nil { tailStart = rows.count }
        let slot = find(key)
        if slots[slot] != 0 {
            let index = Int(slots[slot] & 0xFFFF_FFFF) - 1
            if rows[index].flags & PackedRow.removed != 0 { live += 1 }
            rows[index] = row  // the superseded row's names stay in the buffer, unused
            return
        }
        slots[slot] = key.fingerprint | UInt64(rows.count + 1)
        rows.append(row)
        keys.append(key)
        live += 1
        if (rows.count - (tailStart ?? 0)) * 4 > slots.count * 3 { grow() }
    }

    /// Marks the row of `key` removed; a key not among the rows from `tailStart` on gets a removed row of its
    /// own, so that ``supersedeUniqueRows()`` still finds the removal.
    private mutating func remove(_ key: RowKey) {
        let slot = find(key)
        if slots[slot] == 0 {
            put(
                PackedRow(
                    bytes: 0, nameStart: 0, nameCount: 0, assetsDone: 0, assetsTotal: 0, day: 0, folderCount: 0,
                    status: .none, flags: 0), key)
        }
        let index = Int(slots[find(key)] & 0xFFFF_FFFF) - 1
        if rows[index].flags & PackedRow.removed == 0 {
            rows[index].flags |= PackedRow.removed
            live -= 1
        }
    }

    /// Marks removed each row before `tailStart` whose key a later line changed or removed: one pass in order
    /// over their keys, each looked up among the later lines' keys (usually few).
    private mutating func supersedeUniqueRows() {
        guard let tailStart else { return }
        for index in 0..<tailStart where slots[find(keys[index])] != 0 {
            if rows[index].flags & PackedRow.removed == 0 {
                rows[index].flags |= PackedRow.removed
                live -= 1
            }
        }
    }

    /// The slot holding the key, or the empty slot where it would go.
    private func find(_ key: RowKey) -> Int {
        let mask = slots.count - 1
        var slot = key.home(mask: mask)
        return slots.withUnsafeBufferPointer { slots in
            keys.withUnsafeBufferPointer { keys in
                while slots[slot] != 0 {
                    if slots[slot] & 0xFFFF_FFFF_0000_0000 == key.fingerprint,
                        keys[Int(slots[slot] & 0xFFFF_FFFF) - 1] == key
                    {
                        return slot
                    }
                    slot = (slot + 1) & mask
                }
                return slot
            }
        }
    }

    private mutating func grow() {
        slots = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for index in (tailStart ?? 0)..<keys.count {
            var slot = keys[index].home(mask: mask)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = keys[index].fingerprint | UInt64(index + 1)
        }
    }
}

/// A record key (32 hex digits) as two integers.
private struct RowKey: Equatable {
    var high: UInt64
    var low: UInt64

    /// 32 bits of the key kept in its slot.
    var fingerprint: UInt64 { high & 0xFFFF_FFFF_0000_0000 }

    /// Keys are hashes already: their low bits spread over the table.
    func home(mask: Int) -> Int { Int(truncatingIfNeeded: low) & mask }
}

private struct SortKey {
    var prefix: UInt64
    var prefix2: UInt64
    var day: Int32
    var row: Int32
}
