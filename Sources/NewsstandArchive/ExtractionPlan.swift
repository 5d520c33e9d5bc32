/// How many workers unpack an archive: several for a large ZIP whose entries cannot interfere with one
/// another, else one.
///
/// Each worker opens the archive itself and takes every n-th entry (a seekable ZIP reader skips the others
/// without inflating them). Entries can only be unpacked in any order when the order cannot change the
/// result, which the central directory shows before a byte is written: no symbolic links (nothing may be
/// written through one, and a link must exist before what passes it is refused), no two entries with the
/// same path (the last one wins), no file where another entry needs a folder, no encrypted entry (refused
/// at its place in the archive). Anything else, or anything that does not parse, is unpacked by one worker
/// in archive order, which also reports the problems.
///
/// Folders listed as entries are created first, by one worker, before any file: libarchive defers a new
/// folder's time to the end, but sets it at once on a folder that already exists (made as another entry's
/// parent), after which the files still to come would change it.
struct ExtractionPlan: Sendable, Hashable {
    /// How many workers unpack the archive.
    var workers: Int
    /// Whether worker 0 creates the listed folders in a pass of their own before the files.
    var directoriesFirst: Bool

    /// One worker, in archive order.
    static let sequential = ExtractionPlan(workers: 1, directoriesFirst: false)

    /// Below this many entries the threads cost more than they save.
    static let defaultThreshold = 1_000

    static func make(forArchiveAt path: String, maximum: Int, threshold: Int = defaultThreshold) -> ExtractionPlan {
        guard maximum > 1, let entries = ZipCentralDirectory.entries(path: path), entries.count >= threshold,
            independent(entries)
        else { return .sequential }
        return ExtractionPlan(
            workers: maximum, directoriesFirst: entries.contains { $0.name.last == UInt8(ascii: "/") })
    }

    /// Whether the entries can be unpacked in any order (see the type's description).
    static func independent(_ entries: [ZipCentralDirectory.Entry]) -> Bool {
        var paths = Set<[UInt8]>()
        var files = Set<[UInt8]>()
        var parents = Set<[UInt8]>()
        paths.reserveCapacity(entries.count)
        for entry in entries {
            guard !entry.isSymlink, !entry.isEncrypted,
                let components = try? EntryPathPolicy.normalize(entry.name), !components.isEmpty
            else { return false }
            let path = EntryPathPolicy.join(components)
            guard paths.insert(path).inserted else { return false }
            if entry.name.last != UInt8(ascii: "/") { files.insert(path) }
            var depth = components.count - 1
            while depth > 0 {
                guard parents.insert(EntryPathPolicy.join(Array(components[..<depth]))).inserted else { break }
                depth -= 1
            }
        }
        return files.isDisjoint(with: parents)
    }
}
