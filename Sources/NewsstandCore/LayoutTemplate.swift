import Foundation

/// How an issue's files are filed: a relative path of folders and a file name built from placeholders, such
/// as `{publication}/{date} {title}.{ext}` (yt-dlp's `-o`, gPodder's folder per podcast).
///
/// Placeholders: `{publication}`, `{subscription}`, `{title}`, `{name}` (the issue's name), `{date}`
/// (YYYY-MM-DD), `{year}`, `{month}`, `{day}`, `{n}` (a counter that makes the name unique) and `{ext}` (the
/// file's extension, from the URL, else the response's `Content-Type`; only as the name's end, `.{ext}`, and
/// added anyway when left out). At least one folder and a file name: an issue never lands at the library's
/// top, among its own files.
///
/// Every value is hostile until sanitised: each component is rendered, then passed through
/// ``SafePathComponent/init(sanitizing:fallback:)`` (so `../../x`, `/etc/passwd`, `CON`, `a:b?c` and trailing
/// dots become one portable component each), and the template itself may hold no `..`, `.`, empty or absolute
/// part, so no rendering can leave the library.
public struct LayoutTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    public let text: String
    public var description: String { text }

    private enum Piece: Sendable, Hashable {
        case literal(String)
        case placeholder(String)
    }

    /// Folders, then the file stem (without `.{ext}`), each a list of pieces.
    private let components: [[Piece]]
    private let hasCounter: Bool

    static let placeholders: Set<String> = [
        "publication", "subscription", "title", "name", "date", "year", "month", "day", "n",
    ]

    /// What the placeholders stand for, for one issue.
    public struct Values: Sendable, Hashable {
        public var publication: String
        public var subscription: String?
        public var title: String
        public var name: String
        public var date: IssueDate

        public init(publication: String, subscription: String? = nil, title: String, name: String, date: IssueDate) {
            self.publication = publication
            self.subscription = subscription
            self.title = title
            self.name = name
            self.date = date
        }
    }

    /// Parses and checks `text`.
    /// - Throws: `.invalidConfiguration` saying what is wrong with it.
    public init(_ text: String) throws {
        func invalid(_ reason: String) -> NewsstandError {
            NewsstandError(.invalidConfiguration, "the layout template \(text.debugDescription) \(reason)")
        }
        guard text.utf8.count <= 1024 else { throw invalid("is longer than 1024 bytes") }
        guard !text.hasPrefix("/") else { throw invalid("must be relative to the library (no leading /)") }
        var parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2 else {
            throw invalid("needs a folder and a file name, such as {publication}/{date} {title}.{ext}")
        }
        guard let last = parts.last else { throw invalid("is empty") }
        if last.hasSuffix(".{ext}") { parts[parts.count - 1] = String(last.dropLast(6)) }
        var components: [[Piece]] = []
        var counter = false
        for part in parts {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw invalid("has an empty folder or file name") }
            guard trimmed != ".", trimmed != ".." else { throw invalid("may not hold . or .. parts") }
            let pieces = try LayoutTemplate.pieces(of: part, invalid: invalid)
            counter = counter || pieces.contains(.placeholder("n"))
            components.append(pieces)
        }
        self.text = text
        self.components = components
        self.hasCounter = counter
    }

    private static func pieces(of part: String, invalid: (String) -> NewsstandError) throws -> [Piece] {
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(part)
        while let character = rest.first {
            if character == "}" { throw invalid("has a } without its {") }
            guard character == "{" else {
                literal.append(character)
                rest.removeFirst()
                continue
            }
            guard let close = rest.firstIndex(of: "}") else { throw invalid("has a { without its }") }
            let name = String(rest[rest.index(after: rest.startIndex)..<close])
            if name == "ext" { throw invalid("may use {ext} only at the end, as .{ext}") }
            guard placeholders.contains(name) else {
                let known = (placeholders.sorted() + ["ext"]).map { "{\($0)}" }.joined(separator: " ")
                throw invalid("has an unknown placeholder {\(name)} (known: \(known))")
            }
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
            pieces.append(.placeholder(name))
            rest = rest[rest.index(after: close)...]
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        return pieces
    }

    /// The folder (relative, one or more safe components) and the file stem for `values`, the `attempt`-th
    /// try: attempt 1 is the plain rendering; later ones count `{n}` up, or (without `{n}`) add ` (attempt)`
    /// to the stem, so that two issues never share a path.
    public func render(_ values: Values, attempt: Int = 1) -> (folder: String, stem: String) {
        var rendered: [String] = []
        for pieces in components {
            var text = ""
            for piece in pieces {
                switch piece {
                case .literal(let literal): text += literal
                case .placeholder(let name): text += value(name, values, n: attempt)
                }
            }
            var component = SafePathComponent(sanitizing: text, fallback: "untitled")
            // The top folder is among the library's own files: never one of their names.
            let value = component.value
            if rendered.isEmpty, LibraryLayout.isReserved(value) || LibraryLayout.isLibraryFile(value) {
                component = SafePathComponent(sanitizing: "_" + component.value)
            }
            rendered.append(component.value)
        }
        var stem = rendered.removeLast()
        if !hasCounter, attempt > 1 { stem = SafePathComponent(sanitizing: stem).withSuffix(attempt).value }
        return (rendered.joined(separator: "/"), stem)
    }

    private func value(_ name: String, _ values: Values, n: Int) -> String {
        switch name {
        case "publication": return values.publication
        case "subscription": return values.subscription ?? values.publication
        case "title": return values.title
        case "name": return values.name
        case "date": return values.date.description
        case "year": return String(values.date.description.prefix(4))
        case "month": return String(values.date.description.dropFirst(5).prefix(2))
        case "day": return String(values.date.description.suffix(2))
        case "n": return String(n)
        default: return ""
        }
    }
}
