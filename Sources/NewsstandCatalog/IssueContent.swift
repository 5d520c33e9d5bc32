import Foundation
import NewsstandCore

#if canImport(Glibc)
    import Glibc
#endif

/// What an issue holds on disk and how its removal moves it out: the content folder of an issue that has one
/// of its own, or only its own files in the folder a filed issue shares (``Issue/isFiled``). `remove`, `prune`
/// and `verify --repair` all go through here, so no removal ever takes another issue's files.
package enum IssueContent {
    /// The paths that are the issue's alone: its folder, or a filed issue's files in the shared folder.
    package static func paths(of issue: Issue, layout: LibraryLayout) -> [String] {
        let folder = layout.contentFolder(issue.folderName)
        guard let stem = issue.fileStem else { return [folder] }
        let unrecorded = issue.assets.filter { $0.fileName == nil }.compactMap {
            unrecordedPlacement(of: $0.id, stem: stem, layout: layout)
        }
        return (issue.filedNames + unrecorded).map { "\(folder)/\($0)" }
    }

    /// The name a placing killed before its catalog commit left in a filed issue's folder: the resume record's
    /// `placedAs` (saved before the move), when it is this asset's record and a name of this issue's stem.
    /// Read here, below the download layer, so that `remove` and `prune` leave no such file behind.
    static func unrecordedPlacement(of assetID: String, stem: String, layout: LibraryLayout) -> String? {
        guard let data = try? AtomicFile.read(layout.resumeRecord(assetID)),
            let value = try? data.withUnsafeBytes({ try JSONReader.parse($0.bindMemory(to: UInt8.self)) }),
            case .object(let record) = value, case .string(let placed)? = record["placedAs"]
        else { return nil }
        if case .string(let owner)? = record["asset"], owner != assetID { return nil }
        guard SafePathComponent(validating: placed) != nil, placed.hasPrefix(stem) else { return nil }
        return placed
    }

    /// Moves the issue's content into the library's trash (renames only, so it is quick and cannot half
    /// happen per file), for the caller to delete once its catalog change has committed.
    /// - Returns: The trashed path to delete, or nil when there was nothing on disk.
    package static func moveToTrash(_ issue: Issue, layout: LibraryLayout) throws -> String? {
        let target = "\(layout.trash)/\(issue.lockName)-\(UInt32.random(in: 0...UInt32.max))"
        guard issue.isFiled else {
            let content = layout.contentFolder(issue.folderName)
            guard POSIX.exists(content) else { return nil }
            try POSIX.rename(content, target)
            return target
        }
        let present = paths(of: issue, layout: layout).filter(POSIX.exists)
        guard !present.isEmpty else { return nil }
        try POSIX.makeDirectory(target)
        for path in present {
            try POSIX.rename(path, "\(target)/\((path as NSString).lastPathComponent)")
        }
        return target
    }

    /// Makes `folder` (a path relative to the library) and each folder above it, one component at a time; a
    /// component that is anything but a real folder (a file, a symbolic link) fails it, so content never goes
    /// through a link out of the library.
    package static func makeFolders(_ folder: String, layout: LibraryLayout) throws {
        var path = layout.root
        for part in folder.split(separator: "/") {
            path += "/\(part)"
            try POSIX.makeDirectory(path)
        }
    }

    /// Removes a filed issue's shared folders that its removal left empty, deepest first, stopping at the
    /// first that still holds something (another issue's files, or the user's). Best effort: rmdir(2) only
    /// ever removes an empty folder, so it never takes anything.
    package static func removeEmptyFolders(of issue: Issue, layout: LibraryLayout) {
        guard issue.isFiled else { return }
        var parts = issue.folderName.split(separator: "/").map(String.init)
        while !parts.isEmpty {
            guard rmdir(layout.contentFolder(parts.joined(separator: "/"))) == 0 else { return }
            parts.removeLast()
        }
    }
}
