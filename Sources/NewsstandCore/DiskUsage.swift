internal import CSystemShims  // `struct stat` and its members (<sys/stat.h>)

#if canImport(Glibc)
    import Glibc
#endif

/// What a file or a tree takes: the apparent size (`st_size`) of every object in it that is not a
/// folder, a hard-linked file counted once. This is what `prune` reports as freed, so that the figure
/// is exact and the same before and after a removal whatever the file system's block size.
///
/// Never follows a symbolic link (a link counts as its own few bytes). Blocking.
package enum DiskUsage {
    /// The bytes of `path` and, if it is a folder, of everything below it; 0 when it does not exist.
    package static func bytes(of path: String) -> Int64 {
        var seen = Set<FileID>()
        return bytes(of: path, seen: &seen)
    }

    /// The bytes of several paths together (a file linked into two of them counted once).
    package static func bytes(of paths: [String]) -> Int64 {
        var seen = Set<FileID>()
        return paths.reduce(Int64(0)) { $0.saturatingAdd(bytes(of: $1, seen: &seen)) }
    }

    private struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private static func bytes(of path: String, seen: inout Set<FileID>) -> Int64 {
        bytes(ofC: Array(path.utf8CString), seen: &seen)
    }

    /// On C strings, so that names that are not UTF-8 are measured too.
    private static func bytes(ofC path: [CChar], seen: inout Set<FileID>) -> Int64 {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            if info.st_nlink > 1, !seen.insert(FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))).inserted
            {
                return 0
            }
            return Int64(info.st_size)
        }
        guard let directory = opendir(path) else { return 0 }
        defer { closedir(directory) }
        var total: Int64 = 0
        let prefix = path.dropLast() + [CChar(bitPattern: UInt8(ascii: "/"))]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
            }
            if name == [46] || name == [46, 46] { continue }  // "." and ".."
            total = total.saturatingAdd(bytes(ofC: prefix + name + [0], seen: &seen))
        }
        return total
    }
}
