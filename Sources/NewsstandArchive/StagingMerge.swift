internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)
import Glibc
import NewsstandCore

/// Moves everything inside `staging` into `destination`, then removes `staging`.
///
/// - Directories are merged (iteratively, one descriptor per side): a directory that already exists in `destination` keeps the files of other
///   assets and receives the staged ones; a staged directory with no counterpart is moved in whole with one
///   `rename(2)`.
/// - Files and symbolic links replace same-named ones atomically with `rename(2)`: at every instant the name holds
///   either the old or the new object.
/// - Nothing in `destination` is followed: every object is examined with `fstatat(AT_SYMLINK_NOFOLLOW)` and every
///   directory opened with `O_NOFOLLOW`, through directory file descriptors (`renameat`, `unlinkat`). Where a
///   directory is staged and `destination` has a file or a symlink of that name (say `docs -> /elsewhere`), the
///   file or link is removed and the directory moved in its place; where a file is staged and `destination` has a
///   directory of that name, that directory is deleted (without following links) and the file moved in.
/// - Idempotent: after a crash part-way, running it again with a freshly extracted staging folder converges on the
///   same result, because every step either finds its work done or does it again.
///
/// Durability is left to the caller: nothing is `fsync`ed (per-file syncs would make unpacking ten thousand files
/// slow); call `syncfs(2)` or `fsync(2)` the folders before recording the asset as unpacked if that must survive a
/// power cut.
///
/// Blocking: call it off the Swift concurrency pool.
///
/// - Parameters:
///   - staging: The staging folder; must be on the same file system as `destination`, since `rename(2)` cannot
///     cross file systems.
///   - destination: The final folder; created (one level) if missing. The folder itself is trusted: only what is
///     inside it is never followed.
/// - Throws: ``ArchiveError`` `.io` naming the path concerned, relative to the staging folder.
package func mergeStaging(_ staging: String, into destination: String) throws {
    try StagingMerge.merge(staging, into: destination)
}

/// The implementation of ``mergeStaging(_:into:)``, on directory file descriptors and byte names (file names need
/// not be valid UTF-8).
enum StagingMerge {
    /// A file name or path as C wants it: bytes ending with a NUL (passed to C with Swift's array-to-pointer
    /// conversion).
    typealias CName = [CChar]

    private static let directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    static func merge(_ staging: String, into destination: String) throws(ArchiveError) {
        if mkdir(destination, 0o755) != 0 && errno != EEXIST {
            throw failure("cannot create the destination folder \(destination)", errno: errno, path: nil)
        }
        // The two folders themselves are the caller's and trusted (either may be reached through a symlink).
        let source = try openDirectory(AT_FDCWD, cName(staging), shownAs: staging, followingSymlink: true)
        let target: Int32
        do {
            target = try openDirectory(AT_FDCWD, cName(destination), shownAs: destination, followingSymlink: true)
        } catch {
            close(source)
            throw error
        }
        try mergeContents(of: source, into: target)
        if rmdir(staging) != 0 {
            throw failure("cannot remove the staging folder \(staging)", errno: errno, path: nil)
        }
    }

    /// A folder being merged: the names still to move, and its own name in its parent (nil for the top).
    private struct Level {
        var names: [CName]
        var next = 0
        let name: CName?
        let path: String
    }

    /// Merges the two folders, taking ownership of (and closing) both descriptors.
    ///
    /// Iterative, with one descriptor per side whatever the depth: it goes down with `openat` and back up with
    /// `openat("..")` (as ``TreeRemover`` does), so a 7,000-deep chain neither overflows the stack nor runs out
    /// of descriptors, and no path ever grows past `PATH_MAX`. Only the names of the folders on the way down
    /// are kept.
    private static func mergeContents(of source: Int32, into target: Int32) throws(ArchiveError) {
        var source = source
        var target = target
        defer {
            close(source)
            close(target)
        }
        // List first, then move: renaming entries out of a directory while reading it is not portable.
        var levels = [Level(names: try names(in: source, relativePath: ""), name: nil, path: "")]
        while let level = levels.last {
            guard level.next < level.names.count else {
                levels.removeLast()
                guard let name = level.name else { return }
                source = try up(from: source, shownAs: level.path)
                target = try up(from: target, shownAs: level.path)
                if unlinkat(source, name, AT_REMOVEDIR) != 0 {
                    throw failure("cannot remove the staged folder", errno: errno, path: level.path)
                }
                continue
            }
            let name = level.names[level.next]
            levels[levels.count - 1].next += 1
            let path = join(level.path, name)
            guard let staged = try status(source, name, path: path) else {
                continue
            }
            let existing = try status(target, name, path: path)
            if isDirectory(staged) {
                if let existing, isDirectory(existing) {
                    let sourceChild = try openDirectory(source, name, shownAs: path)
                    let targetChild: Int32
                    do {
                        targetChild = try openDirectory(target, name, shownAs: path)
                    } catch {
                        close(sourceChild)
                        throw error
                    }
                    close(source)
                    close(target)
                    source = sourceChild
                    target = targetChild
                    levels.append(Level(names: try names(in: source, relativePath: path), name: name, path: path))
                    continue
                }
                if existing != nil {
                    // A file or a symlink (perhaps pointing out of the destination) where a folder belongs.
                    try removeTree(in: target, name, path: path)
                }
            } else if let existing, isDirectory(existing) {
                try removeTree(in: target, name, path: path)
            }
            if renameat(source, name, target, name) != 0 {
                let code = errno
                let hint = code == EXDEV ? " (the staging folder must be on the destination's file system)" : ""
                throw failure("cannot move into place\(hint)", errno: code, path: path)
            }
        }
    }

    /// Replaces a folder's descriptor with its parent's (`openat("..")`), closing the old one.
    private static func up(from directory: Int32, shownAs path: String) throws(ArchiveError) -> Int32 {
        let parent = openat(directory, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else {
            throw failure("cannot go back up from the folder", errno: errno, path: path)
        }
        close(directory)
        return parent
    }

    /// Deletes `name` in the directory `parent`, recursively if it is a directory, never following a symlink.
    static func removeTree(in parent: Int32, _ name: CName, path: String) throws(ArchiveError) {
        do {
            try TreeRemover.remove(name, in: parent, shownAs: path)
        } catch {
            let more = error.others > 0 ? " (and \(error.others) more)" : ""
            throw failure(error.operation + more, errno: error.errno, path: error.path)
        }
    }

    // MARK: - System call wrappers

    /// Opens a directory; refuses a symlink unless `followingSymlink`.
    private static func openDirectory(
        _ parent: Int32,
        _ name: CName,
        shownAs shown: String,
        followingSymlink: Bool = false
    ) throws(ArchiveError) -> Int32 {
        let descriptor = openat(parent, name, followingSymlink ? directoryFlags & ~O_NOFOLLOW : directoryFlags)
        guard descriptor >= 0 else {
            throw failure("cannot open the folder \(shown)", errno: errno, path: nil)
        }
        return descriptor
    }

    /// `fstatat` without following a symlink; `nil` when the name does not exist.
    private static func status(_ parent: Int32, _ name: CName, path: String) throws(ArchiveError) -> stat? {
        var info = stat()
        if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            return info
        }
        if errno == ENOENT {
            return nil
        }
        throw failure("cannot examine", errno: errno, path: path)
    }

    /// The names in a directory, without `.` and `..`.
    private static func names(in directory: Int32, relativePath: String) throws(ArchiveError) -> [CName] {
        // fdopendir takes ownership of the descriptor it is given, so give it a duplicate.
        let duplicate = dup(directory)
        guard duplicate >= 0, let stream = fdopendir(duplicate) else {
            let code = errno
            if duplicate >= 0 {
                close(duplicate)
            }
            throw failure("cannot list the folder", errno: code, path: relativePath)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var result: [CName] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 {
                    throw failure("cannot list the folder", errno: errno, path: relativePath)
                }
                return result
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
            }
            if name != [46] && name != [46, 46] {  // "." and ".."
                result.append(name + [0])
            }
        }
    }

    private static func isDirectory(_ info: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFDIR
    }

    private static func cName(_ path: String) -> CName {
        path.utf8.map { CChar(bitPattern: $0) } + [0]
    }

    /// `parent/name` for messages (names that are not UTF-8 are shown with replacement characters).
    private static func join(_ parent: String, _ name: CName) -> String {
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return parent.isEmpty ? text : parent + "/" + text
    }

    private static func failure(_ message: String, errno code: Int32, path: String?) -> ArchiveError {
        ArchiveError.system(code, message, entryPath: path)
    }
}
