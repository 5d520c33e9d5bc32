import Foundation
import NewsstandFeeds

/// Where an EPUB declares its cover image: `META-INF/container.xml` names the OPF package; the package's
/// manifest has the item with `properties="cover-image"` (EPUB 3), else the item whose id the
/// `<meta name="cover" content="…">` names (EPUB 2). Read with the feeds' XML tokenizer (no entities, no DTDs).
package enum EPUBCover {
    /// The OPF package's path inside the book, from `container.xml`.
    package static func packagePath(container: Data) -> String? {
        var found: String?
        scan(container) { tag in
            if found == nil, tag.localName == "rootfile", let path = tag.attribute("full-path"), !path.isEmpty {
                found = path
            }
        }
        return found
    }

    /// The cover image's path inside the book (resolved against the package's folder), from the OPF package.
    package static func coverPath(package: Data, packagePath: String) -> String? {
        var coverID: String?
        var items: [(id: String?, href: String, properties: String, type: String)] = []
        scan(package) { tag in
            switch tag.localName {
            case "meta" where tag.attribute("name") == "cover":
                coverID = coverID ?? tag.attribute("content")
            case "item":
                guard let href = tag.attribute("href") else { return }
                items.append((tag.attribute("id"), href, tag.attribute("properties") ?? "", tag.attribute("media-type") ?? ""))
            default:
                break
            }
        }
        let declared =
            items.first { $0.properties.split(separator: " ").contains("cover-image") }
            ?? items.first { coverID != nil && $0.id == coverID && $0.type.hasPrefix("image/") }
        guard let href = declared?.href.removingPercentEncoding ?? declared?.href else { return nil }
        let folder = (packagePath as NSString).deletingLastPathComponent
        return normalise(folder.isEmpty ? href : "\(folder)/\(href)")
    }

    /// `a/b/../c` → `a/c`; nil when the path climbs out of the book.
    static func normalise(_ path: String) -> String? {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." || part.isEmpty { continue }
            if part == ".." {
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            } else {
                parts.append(part)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    /// Calls `visit` with each start tag; stops quietly at the first syntax error (a damaged file yields what
    /// came before it).
    private static func scan(_ data: Data, _ visit: (XMLTokenizer.StartTag) -> Void) {
        data.withUnsafeBytes { raw in
            var xml = XMLTokenizer(bytes: raw.bindMemory(to: UInt8.self))
            while let event = try? xml.next() {
                if case .start(let tag) = event { visit(tag) }
            }
        }
    }
}
