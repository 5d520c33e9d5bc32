import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Turns the rest of a URL path into a file inside an issue's folder, or refuses: each component is
/// percent-decoded once and must not be empty, `.`, `..`, or hold `/` or NUL after decoding; the real path
/// (symbolic links resolved) must still be inside the folder's real path. Nothing from a URL reaches the
/// file system otherwise.
enum SafePath {
    /// The absolute path of a regular file inside `folder`, or nil.
    static func resolve(_ rawComponents: [Substring], inside folder: String) -> String? {
        guard !rawComponents.isEmpty else { return nil }
        var parts: [String] = []
        for raw in rawComponents {
            guard let decoded = raw.removingPercentEncoding, !decoded.isEmpty, decoded != ".", decoded != "..",
                !decoded.contains("/"), !decoded.contains("\0")
            else { return nil }
            parts.append(decoded)
        }
        guard let root = realPath(folder), let target = realPath(folder + "/" + parts.joined(separator: "/")) else {
            return nil
        }
        guard target.hasPrefix(root + "/") else { return nil }
        var info = stat()
        guard stat(target, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return target
    }

    /// `realpath(3)`: symbolic links, `.` and `..` resolved; nil when the file does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
