/// The path rules applied to every entry before libarchive sees it. Pure functions on bytes: names need not be
/// valid UTF-8 (Linux file names are bytes), and any non-ASCII text is allowed.
package enum EntryPathPolicy {
    /// Why a path was refused.
    package struct Refusal: Error, Sendable, Hashable {
        var reason: String
    }

    private static let slash = UInt8(ascii: "/")
    private static let backslash = UInt8(ascii: "\\")
    private static let dot: [UInt8] = [UInt8(ascii: ".")]
    private static let dotDot: [UInt8] = [UInt8(ascii: "."), UInt8(ascii: ".")]

    /// Splits an entry path (or hard-link target) into its components, dropping empty and `.` components.
    ///
    /// - Parameter path: The path as stored.
    /// - Returns: The components; empty for `./` and the like, which name the destination folder itself.
    /// - Throws: ``Refusal`` for an empty or absolute path, a `..` component (also one spelt with Windows
    ///   backslashes, `..\\`), or a control character (C0 or DEL: they corrupt terminal output and logs and
    ///   no real issue uses them).
    package static func normalize(_ path: [UInt8]) throws(Refusal) -> [[UInt8]] {
        guard !path.isEmpty else {
            throw Refusal(reason: "the path is empty")
        }
        guard !containsControlCharacter(path) else {
            throw Refusal(reason: "the path contains a control character")
        }
        guard path[0] != slash else {
            throw Refusal(reason: "the path is absolute")
        }
        var components: [[UInt8]] = []
        for component in path.split(separator: slash, omittingEmptySubsequences: true) {
            let component = Array(component)
            if component == dot {
                continue
            }
            if component == dotDot || hasBackslashDotDot(component) {
                throw Refusal(reason: "the path has a '..' component")
            }
            components.append(component)
        }
        return components
    }

    /// Checks a symbolic link's target. The link lives `linkDepth` folders below the destination root.
    ///
    /// Allowed: a relative target made of some leading `..` (no more than `linkDepth`) followed by names, such as
    /// `v2/readme.txt` or `../shared/logo.png`. Refused: an empty or absolute target, control characters, more
    /// leading `..` than the link is deep, and a `..` after a name (`a/../b`). The last rule is stricter than a
    /// lexical check on purpose: with links `d -> .` and `e -> d/..`, `e` looks lexically like the root but
    /// resolves to the root's parent, because `d/..` is the parent of wherever `d` points. With only leading
    /// `..`, each link climbs real folders (nothing is ever written through a symlink, so a link's parents are
    /// real) and then only descends, and every symlink it descends through is, by the same rule, inside the root.
    ///
    /// - Parameters:
    ///   - target: The link target as stored.
    ///   - linkDepth: How many folders lie between the destination root and the link.
    /// - Throws: ``Refusal``.
    package static func checkSymlinkTarget(_ target: [UInt8], linkDepth: Int) throws(Refusal) {
        guard !target.isEmpty else {
            throw Refusal(reason: "the symbolic link's target is empty")
        }
        guard !containsControlCharacter(target) else {
            throw Refusal(reason: "the symbolic link's target contains a control character")
        }
        let shown = String(decoding: target, as: UTF8.self)
        guard target[0] != slash else {
            throw Refusal(reason: "the symbolic link's target '\(shown)' is absolute")
        }
        var climbs = 0
        var descended = false
        for component in target.split(separator: slash, omittingEmptySubsequences: true) {
            let component = Array(component)
            if component == dot {
                continue
            }
            if hasBackslashDotDot(component) {
                throw Refusal(reason: "the symbolic link's target '\(shown)' has a '..\\' component")
            }
            if component == dotDot {
                guard !descended else {
                    throw Refusal(reason: "the symbolic link's target '\(shown)' has a '..' after a name")
                }
                climbs += 1
            } else {
                descended = true
            }
        }
        guard climbs <= linkDepth else {
            throw Refusal(reason: "the symbolic link's target '\(shown)' points outside the destination")
        }
    }

    /// Joins components with `/`.
    package static func join(_ components: [[UInt8]]) -> [UInt8] {
        Array(components.joined(separator: [slash]))
    }

    private static func containsControlCharacter(_ bytes: [UInt8]) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// `..\evil` is one harmless name on Linux, but a traversal wherever the folder is later copied to a system
    /// that treats `\` as a separator; nothing legitimate is named like that.
    private static func hasBackslashDotDot(_ component: [UInt8]) -> Bool {
        component.contains(backslash)
            && component.split(separator: backslash, omittingEmptySubsequences: true).contains { Array($0) == dotDot }
    }
}
