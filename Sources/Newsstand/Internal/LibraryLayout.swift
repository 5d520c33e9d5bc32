/// Where each thing lives inside a library folder. Internal folders start with a dot, and issue
/// folder names never do, so the two can never collide.
struct LibraryLayout: Sendable, Hashable {
    let root: String

    var manifest: String { root + "/library.json" }
    var lockFile: String { root + "/.lock" }
    /// Partial and completed downloads with their resume records.
    var downloads: String { root + "/.downloads" }
    /// One extraction folder per asset being unpacked.
    var staging: String { root + "/.staging" }
    /// Content folders of removed issues on their way out.
    var trash: String { root + "/.trash" }

    func partialFile(_ id: String) -> String { "\(downloads)/\(id).part" }
    func resumeRecord(_ id: String) -> String { "\(downloads)/\(id).resume.json" }
    func completedFile(_ id: String) -> String { "\(downloads)/\(id).done" }
    /// Held (non-blocking `flock`) by the one process downloading the asset.
    func assetLock(_ id: String) -> String { "\(downloads)/\(id).lock" }
    func stagingFolder(_ id: String) -> String { "\(staging)/\(id)" }
    func contentFolder(_ folderName: String) -> String { "\(root)/\(folderName)" }
    /// Held while an issue's folder is filled (merge, placement) or removed.
    func issueLock(_ folderName: String) -> String { "\(staging)/\(folderName).lock" }

    /// Names a top-level entry may not take because the library itself uses them.
    static func isReserved(_ component: String) -> Bool {
        component.lowercased().hasPrefix("library.json")
    }
}
