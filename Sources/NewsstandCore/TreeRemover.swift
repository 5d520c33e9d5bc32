internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)

#if canImport(Glibc)
    import Glibc
#endif

/// Deletes a file, a symbolic link, or a folder and everything in it, never following a symbolic link.
///
/// Works on directory descriptors (`openat` with `O_NOFOLLOW | O_DIRECTORY`, `fdopendir`/`readdir`,
/// `unlinkat`), so no path handed to the kernel is longer than one name: trees deeper than `PATH_MAX` are
/// removed too. Iterative, holding one folder open at a time and climbing back through `..` (checked to be the
/// folder it came from), so neither the stack nor the descriptor table limits the depth.
///
/// A symbolic link is removed as a link; what it points to is never touched. A folder without owner access is
/// given it (`fchmod`) so that its entries can be listed and removed. What cannot be removed is left, the rest of
/// the tree is still removed, and the first failure is reported with the number of others.
///
/// Blocking: call it off the Swift concurrency pool. `package` so that the test support cleans up with it too.
package enum TreeRemover {
    /// A file name as C wants it: bytes ending with a NUL (names need not be valid UTF-8).
    package typealias CName = [CChar]

    /// What could not be removed.
    package struct Failure: Error, Sendable {
        /// The first object that could not be removed, as a path below the removed root (the root's own name
        /// included), and what the system call said.
        package var path: String
        package var operation: String
        package var errno: Int32
        /// How many other objects could not be removed either.
        package var others: Int
    }

    private static let directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    /// Removes `path`; a missing path is fine. The path's own parent folders are trusted (followed if links).
    ///
    /// - Throws: ``NewsstandError`` `.io` naming the first object that could not be removed, with its `errno`.
    package static func remove(_ path: String) throws(NewsstandError) {
        do {
            try remove(path.utf8.map { CChar(bitPattern: $0) } + [0], in: AT_FDCWD, shownAs: path)
        } catch {
            let more = error.others > 0 ? " (and \(error.others) more)" : ""
            throw NewsstandError.posix(error.errno, error.operation, path: error.path + more)
        }
    }

    /// Removes `name` in the folder `parent` (or relative to the working directory with `AT_FDCWD`); a missing
    /// name is fine.
    ///
    /// - Parameters:
    ///   - name: The name to remove, NUL-terminated.
    ///   - parent: The folder holding it.
    ///   - shown: How `name` is shown in a failure.
    /// - Throws: ``Failure``.
    package static func remove(_ name: CName, in parent: Int32, shownAs shown: String) throws(Failure) {
        var failures = Failures()
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno != ENOENT { failures.add("cannot examine", shown, errno) }
            try failures.throwIfAny()
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            if unlinkat(parent, name, 0) != 0 && errno != ENOENT { failures.add("cannot delete", shown, errno) }
            try failures.throwIfAny()
            return
        }
        var current = openat(parent, name, directoryFlags)
        guard current >= 0 else {
            failures.add("cannot open the folder", shown, errno)
            try failures.throwIfAny()
            return
        }
        // The folders from the root down to `current`, each with the subfolders still to visit.
        var root = Frame(name: name, device: info.st_dev, inode: info.st_ino)
        (root.pendingFolders, root.failed) = empty(current, mode: info.st_mode, failures: &failures, shown: shown)
        var frames = [root]
        while let last = frames.indices.last {
            if let child = frames[last].pendingFolders.popLast() {
                let next = openat(current, child, directoryFlags)
                var childInfo = stat()
                guard next >= 0, fstat(next, &childInfo) == 0 else {
                    let code = errno
                    if next >= 0 { close(next) }
                    // Gone meanwhile is fine; a link swapped in (ELOOP/ENOTDIR) is deleted as a link.
                    if code != ENOENT && unlinkat(current, child, 0) != 0 && errno != ENOENT {
                        failures.add("cannot open the folder", path(frames, child, root: shown), code)
                        frames[last].failed = true
                    }
                    continue
                }
                close(current)
                current = next
                var frame = Frame(name: child, device: childInfo.st_dev, inode: childInfo.st_ino)
                (frame.pendingFolders, frame.failed) = empty(
                    current, mode: childInfo.st_mode, failures: &failures, shown: path(frames, child, root: shown))
                frames.append(frame)
                continue
            }
            // Every entry of `current` is dealt with: leave it and remove it from its parent.
            let done = frames.removeLast()
            guard let above = frames.indices.last else {
                close(current)
                if unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT && !done.failed {
                    failures.add("cannot delete the folder", shown, errno)
                }
                break
            }
            let up = openat(current, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            var upInfo = stat()
            guard up >= 0, fstat(up, &upInfo) == 0, upInfo.st_dev == frames[above].device,
                upInfo.st_ino == frames[above].inode
            else {
                // Moved while being removed: climbing further could delete outside the tree. Stop here.
                let code = up >= 0 ? ESTALE : errno
                if up >= 0 { close(up) }
                close(current)
                failures.add("cannot delete (it moved meanwhile)", path(frames, done.name, root: shown), code)
                try failures.throwIfAny()
                return
            }
            close(current)
            current = up
            if unlinkat(current, done.name, AT_REMOVEDIR) != 0 && errno != ENOENT {
                frames[above].failed = true
                // A folder left non-empty by a failure below was reported there.
                if !done.failed { failures.add("cannot delete the folder", path(frames, done.name, root: shown), errno) }
            }
        }
        try failures.throwIfAny()
    }

    // MARK: - Steps

    /// One folder on the way down.
    private struct Frame {
        /// Its name in its parent.
        var name: CName
        /// Its identity, to check that `..` leads back to it.
        var device: dev_t
        var inode: ino_t
        /// Its subfolders not yet removed.
        var pendingFolders: [CName] = []
        /// Whether something inside it could not be removed (so it cannot be either).
        var failed = false
    }

    /// Removes every non-folder entry of the open folder `directory`, shown as `shown`.
    ///
    /// - Returns: Its subfolders, and whether something could not be removed or listed.
    private static func empty(
        _ directory: Int32, mode: mode_t, failures: inout Failures, shown: @autoclosure () -> String
    ) -> (subfolders: [CName], failed: Bool) {
        var subfolders: [CName] = []
        var failed = false
        if mode & 0o700 != 0o700 {
            // Without owner access its entries can be neither listed nor removed; it is about to go anyway.
            _ = fchmod(directory, (mode & 0o7777) | 0o700)
        }
        // fdopendir takes ownership of the descriptor it is given, so give it a duplicate.
        let duplicate = dup(directory)
        guard duplicate >= 0, let stream = fdopendir(duplicate) else {
            let code = errno
            if duplicate >= 0 { close(duplicate) }
            failures.add("cannot list the folder", shown(), code)
            return ([], true)
        }
        defer { closedir(stream) }
        // Listed in full before anything is removed: removing entries while reading a folder is not portable.
        var names: [(name: CName, type: UInt8)] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 {
                    failures.add("cannot list the folder", shown(), errno)
                    failed = true
                }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
            }
            if name != [46] && name != [46, 46] {  // "." and ".."
                names.append((name + [0], entry.pointee.d_type))
            }
        }
        for (name, type) in names {
            var isFolder = type == UInt8(DT_DIR)
            if type == UInt8(DT_UNKNOWN) {
                // Some file systems do not fill in d_type.
                var info = stat()
                isFolder = fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFDIR
            }
            if isFolder {
                subfolders.append(name)
            } else if unlinkat(directory, name, 0) != 0 && errno != ENOENT {
                failures.add("cannot delete", shown() + "/" + text(name), errno)
                failed = true
            }
        }
        return (subfolders, failed)
    }

    /// The path of `name` inside the innermost folder of `frames`, for messages only (built on failure, so a
    /// deep tree costs nothing until something goes wrong).
    private static func path(_ frames: [Frame], _ name: CName?, root: String) -> String {
        var parts = [root]
        for frame in frames.dropFirst() { parts.append(text(frame.name)) }
        if let name { parts.append(text(name)) }
        return parts.joined(separator: "/")
    }

    private static func text(_ name: CName) -> String {
        String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The failures met so far: the first is reported, the rest counted.
    private struct Failures {
        var first: Failure?

        mutating func add(_ operation: String, _ path: String, _ code: Int32) {
            if first == nil {
                first = Failure(path: path, operation: operation, errno: code, others: 0)
            } else {
                first?.others += 1
            }
        }

        func throwIfAny() throws(Failure) {
            if let first { throw first }
        }
    }
}
