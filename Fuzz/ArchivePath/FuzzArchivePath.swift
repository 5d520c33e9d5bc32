// libFuzzer target for the archive path policy, `EntryPathPolicy`, fed raw bytes as the extractor gets them
// from libarchive (nothing cleaned first). The input is an entry path, optionally followed by a NUL and a
// symbolic link target (NUL cannot occur in either, so it is a free separator). Whatever the policy
// accepts must, resolved lexically against the destination root, stay inside the root — also when `\` is
// read as a separator, as it is wherever the folder is later copied to Windows.
import Foundation
import FuzzSupport
import NewsstandArchive

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchivePath(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let parts = input.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let entry = Array(parts[0])
    guard let components = try? EntryPathPolicy.normalize(entry) else { return 0 }
    func fail(_ why: String) -> Never {
        fatalError("\(why): entry \(String(decoding: entry, as: UTF8.self).debugDescription)")
    }

    // What the extractor hands libarchive (after its own staging prefix).
    let path = EntryPathPolicy.join(components)
    if path.first == UInt8(ascii: "/") { fail("joined path is absolute") }
    for component in components {
        if component.isEmpty || component == dot || component == dotDot { fail("kept a '', '.' or '..' component") }
        if component.contains(UInt8(ascii: "/")) { fail("a component holds '/'") }
        if component.contains(where: { $0 < 0x20 || $0 == 0x7F }) { fail("a control character") }
    }
    if (try? EntryPathPolicy.normalize(path)) != components && !components.isEmpty {
        fail("normalising the joined path does not give the same components")
    }
    for separators in [slashOnly, slashAndBackslash] {
        guard let depth = resolve(path, from: 0, separators: separators) else {
            fail("escapes the root when \(separators.count == 1 ? "'/'" : "'/' and '\\'") separate")
        }
        if depth == 0 && !components.isEmpty && separators == slashOnly { fail("names the root itself") }
    }

    // A symbolic link at that path: the extractor checks its target against the link's depth.
    guard parts.count == 2, !components.isEmpty else { return 0 }
    let target = Array(parts[1])
    let linkDepth = components.count - 1
    guard (try? EntryPathPolicy.checkSymlinkTarget(target, linkDepth: linkDepth)) != nil else { return 0 }
    for separators in [slashOnly, slashAndBackslash]
    where resolve(target, from: linkDepth, separators: separators) == nil {
        fail("symbolic link to \(String(decoding: target, as: UTF8.self).debugDescription) escapes the root")
    }
    return 0
}

private let dot: [UInt8] = [UInt8(ascii: ".")]
private let dotDot: [UInt8] = [UInt8(ascii: "."), UInt8(ascii: ".")]
private let slashOnly: Set<UInt8> = [UInt8(ascii: "/")]
private let slashAndBackslash: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: "\\")]

/// Resolves `path` lexically from a folder `depth` levels below the root, as the kernel would if every
/// component were a real folder; returns the final depth, or nil if it ever climbs above the root.
/// A path starting with `/` counts as leaving the root (a leading `\` does not: the policy promises only that
/// `..\` never climbs).
private func resolve(_ path: [UInt8], from depth: Int, separators: Set<UInt8>) -> Int? {
    if path.first == UInt8(ascii: "/") { return nil }
    var depth = depth
    for component in path.split(whereSeparator: { separators.contains($0) }) {
        if component.elementsEqual(dot) { continue }
        if component.elementsEqual(dotDot) {
            depth -= 1
            if depth < 0 { return nil }
        } else {
            depth += 1
        }
    }
    return depth
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzArchivePath) }
    }
#endif
