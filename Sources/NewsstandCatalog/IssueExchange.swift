import Foundation
import NewsstandCore

/// The exchange format of `issues import` and `issues export`: issues as a JSON array (one issue per
/// line when written), JSON Lines, or a publisher's catalog object `{"publication", "issues": [...]}`.
///
/// ```
/// {"name":"The Daily 2026-11-20","date":"2026-11-20","assets":[{"url":"https://…","sha256":"…","unpack":true}]}
/// ```
/// Export adds each issue's `status` and each asset's `state`, `receivedBytes` and `expectedBytes`;
/// import reads only the definition (name, date, assets with their `headers`, and `publication`, per issue
/// or for the whole catalog object) and ignores every other key, so an export imports into an empty
/// library as the same issues. An asset's request headers (`"headers": {"Authorization": "Bearer …"}`)
/// are secrets: export writes them only when asked.
package enum IssueExchange {
    /// One issue read from an import, or why it cannot be added.
    package struct Item {
        package var index: Int
        package var name: String?
        package var result: Result<(name: String, date: IssueDate, assets: [AssetRequest]), ImportReport.Refusal>
        /// The issue's own `"publication"`, else the catalog object's.
        package var publication: String? = nil
    }

    /// Reads every item of `bytes`, in order. A syntax error ends the walk (items before it are kept).
    /// - Throws: `.invalidImport` when the document is not an array, JSON Lines or a catalog object.
    package static func read(_ bytes: UnsafeBufferPointer<UInt8>, source: String, _ body: (Item) throws -> Void) throws {
        var reader = JSONReader(bytes: bytes)
        var index = 0
        var publication: String?
        func item(_ value: JSONValue) throws {
            var own: String?
            if case .object(let object) = value, case .string(let text)? = object["publication"] { own = text }
            try body(
                Item(index: index, name: nameOf(value), result: definition(value), publication: own ?? publication))
            index += 1
        }
        do {
            switch reader.peek() {
            case UInt8(ascii: "[")?:
                try reader.expect(UInt8(ascii: "["))
                if reader.peek() == UInt8(ascii: "]") { return }
                while true {
                    try item(try reader.readValue())
                    guard let next = reader.peek() else { throw reader.error("unexpected end of data") }
                    try reader.expect(next)
                    if next == UInt8(ascii: "]") { break }
                    guard next == UInt8(ascii: ",") else { throw reader.error("expected ',' or ']'") }
                }
            case UInt8(ascii: "{")?:
                // One catalog object with an "issues" array, or JSON Lines of issues.
                let first = try reader.readValue()
                if reader.peek() == nil, case .object(let object) = first, case .array(let issues)? = object["issues"],
                    object["name"] == nil
                {
                    if case .string(let text)? = object["publication"] { publication = text }
                    for issue in issues { try item(issue) }
                    return
                }
                try item(first)
                while reader.peek() != nil { try item(try reader.readValue()) }
            case nil:
                return
            default:
                throw reader.error("expected an array, JSON Lines or a catalog object")
            }
            if reader.peek() != nil { throw reader.error("unexpected data after the document") }
        } catch let error as JSONSyntaxError {
            throw NewsstandError(
                .invalidImport, "\(source) is not valid import JSON (\(error)); \(index) issue(s) read before it",
                underlying: error)
        }
    }

    private static func nameOf(_ value: JSONValue) -> String? {
        if case .object(let object) = value, case .string(let name)? = object["name"] { return name }
        return nil
    }

    /// An issue definition, or the reason it is refused.
    static func definition(_ value: JSONValue) -> Result<
        (name: String, date: IssueDate, assets: [AssetRequest]), ImportReport.Refusal
    > {
        guard case .object(let object) = value else { return .failure(.init("not an object")) }
        guard case .string(let name)? = object["name"] else { return .failure(.init("no \"name\" string")) }
        do {
            try IssueName.validate(name)
        } catch let error as NewsstandError {
            return .failure(.init(error.message))
        } catch {
            return .failure(.init("\(error)"))
        }
        guard case .string(let dateText)? = object["date"] else { return .failure(.init("no \"date\" string")) }
        guard let date = IssueDate(dateText) else {
            return .failure(.init("the date \(dateText.debugDescription) is not a YYYY-MM-DD date"))
        }
        var assets: [AssetRequest] = []
        switch object["assets"] {
        case nil, .null?: break
        case .array(let values)?:
            for (n, value) in values.enumerated() {
                guard case .object(let asset) = value, case .string(let urlText)? = asset["url"] else {
                    return .failure(.init("assets[\(n)] has no \"url\" string"))
                }
                var sha256: String?
                switch asset["sha256"] {
                case nil, .null?: break
                case .string(let text)?: sha256 = text
                default: return .failure(.init("assets[\(n)].sha256 is not a string"))
                }
                var unpack = true
                switch asset["unpack"] {
                case nil, .null?: break
                case .bool(let value)?: unpack = value
                default: return .failure(.init("assets[\(n)].unpack is not true or false"))
                }
                var headers: [String: String] = [:]
                switch asset["headers"] {
                case nil, .null?: break
                case .object(let object)?:
                    for (name, value) in object {
                        guard case .string(let text) = value else {
                            return .failure(.init("assets[\(n)].headers.\(name) is not a string"))
                        }
                        headers[name] = text
                    }
                default: return .failure(.init("assets[\(n)].headers is not an object"))
                }
                do {
                    let request = AssetRequest(
                        url: try AssetRequest.parseURL(urlText), sha256: sha256, unpack: unpack, headers: headers)
                    try request.validate()
                    assets.append(request)
                } catch let error as NewsstandError {
                    return .failure(.init(error.message))
                } catch {
                    return .failure(.init("\(error)"))
                }
            }
        default: return .failure(.init("\"assets\" is not an array"))
        }
        return .success((name, date, assets))
    }

    /// Writes one issue of an export; request headers in full only when `includeHeaders` is set.
    package static func write(_ issue: Issue, includeHeaders: Bool, into writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("name", first: true)
        writer.string(issue.name)
        writer.key("date")
        writer.string(issue.date.description)
        if let publication = issue.publication {
            writer.key("publication")
            writer.string(publication)
        }
        writer.key("status")
        writer.string(issue.status.rawValue)
        writer.key("assets")
        writer.array(issue.assets) { writer, asset in
            writer.raw("{")
            writer.key("url", first: true)
            writer.string(asset.url.absoluteString)
            if let sha256 = asset.sha256 {
                writer.key("sha256")
                writer.string(sha256)
            }
            writer.key("unpack")
            writer.bool(asset.unpack)
            if includeHeaders, !asset.headers.isEmpty {
                writer.key("headers")
                writer.stringObject(asset.headers)
            }
            writer.key("state")
            writer.string(asset.state.rawValue)
            writer.key("receivedBytes")
            writer.integer(asset.receivedBytes)
            writer.key("expectedBytes")
            writer.optionalInteger(asset.expectedBytes)
            writer.raw("}")
        }
        writer.raw("}")
    }
}

/// What `importIssues` did with each issue of its input.
public struct ImportReport: Sendable {
    /// Why an issue was not added.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public let reason: String
        package init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// One refused issue: its position in the input (from 0), its name when it had one, and why.
    public struct Refused: Sendable, Hashable {
        public let index: Int
        public let name: String?
        public let reason: String

        package init(index: Int, name: String?, reason: String) {
            self.index = index
            self.name = name
            self.reason = reason
        }
    }

    /// The names of the issues added, in input order.
    public package(set) var added: [String] = []
    /// The issues refused (a duplicate, a bad date, a bad URL, …), in input order.
    public package(set) var refused: [Refused] = []

    package init() {}
}
