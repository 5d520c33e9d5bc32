import Foundation
import NewsstandCore

/// The one JSON schema of an issue: its record file in the catalog, its copy in the index, the
/// `--json` output (which adds `directory` and the counts) and the issues of a version-1
/// `library.json` all use these keys, so a reader of one can read the others.
///
/// ```
/// {"assets":[{"error":null,"expectedBytes":1024,"fileName":"a.pdf","id":"…","isArchive":false,
///   "receivedBytes":1024,"sha256":"…","state":"downloaded","unpack":true,"url":"https://…"}],
///  "date":"2026-11-20","folder":"The Daily 2026-11-20","name":"The Daily 2026-11-20",
///  "status":"available","version":2}
/// ```
package enum IssueRecord {
    /// The schema version written into each record; a record with a higher one is refused.
    package static let version: Int64 = 2
    /// The version of a filed issue's record (one with `"file"`): an older `issues` refuses it rather than take
    /// its shared folder for the issue's own and remove it whole. Other records keep version 2.
    package static let filedVersion: Int64 = 3
    /// The highest version this build reads.
    package static let newestVersion: Int64 = filedVersion

    /// The version `issue`'s record is written with.
    package static func version(of issue: Issue) -> Int64 { issue.isFiled ? filedVersion : version }

    /// Decodes one record file's bytes.
    /// - Throws: `.manifestUnreadable` or `.manifestFromNewerVersion` naming `path`.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws -> Issue {
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch {
            throw unreadable(path, error)
        }
        if case .object(let object) = value, case .integer(let version)? = object["version"], version > Self.newestVersion {
            throw NewsstandError(
                .manifestFromNewerVersion,
                "\(path) has version \(version), newer than this issues understands (\(Self.newestVersion)); it was left untouched"
            )
        }
        do {
            return try Issue(json: value, at: "issue")
        } catch {
            throw unreadable(path, error)
        }
    }

    /// The record file's bytes: sorted keys, one line, a trailing newline.
    package static func encode(_ issue: Issue) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + issue.assets.count * 256)
        issue.write(to: &writer)
        writer.raw("\n")
        return writer.bytes
    }

    static func unreadable(_ path: String, _ error: any Error) -> NewsstandError {
        NewsstandError(
            .manifestUnreadable, "\(path) is not a valid catalog record (\(error)); it was left untouched",
            underlying: error)
    }
}

package struct CatalogShapeError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == JSONValue {
    package func string(_ key: String, at path: String) throws -> String {
        guard case .string(let value)? = self[key] else {
            throw CatalogShapeError("\(path).\(key) is missing or not a string")
        }
        return value
    }

    package func optionalString(_ key: String, at path: String) throws -> String? {
        switch self[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw CatalogShapeError("\(path).\(key) is not a string")
        }
    }

    /// A size: a non-negative integer (sizes from outside never go negative or wrap).
    func optionalSize(_ key: String, at path: String) throws -> Int64? {
        switch self[key] {
        case nil, .null?: return nil
        case .integer(let value)? where value >= 0: return value
        default: throw CatalogShapeError("\(path).\(key) is not a non-negative integer")
        }
    }

    package func optionalBool(_ key: String, at path: String) throws -> Bool? {
        switch self[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw CatalogShapeError("\(path).\(key) is not true or false")
        }
    }

    package func array(_ key: String, at path: String, optional: Bool = false) throws -> [JSONValue] {
        switch self[key] {
        case .array(let values)?: return values
        case nil where optional, .null? where optional: return []
        default: throw CatalogShapeError("\(path.isEmpty ? "" : path + ".")\(key) is missing or not an array")
        }
    }
}

extension Issue {
    init(json: JSONValue, at path: String) throws {
        guard case .object(let object) = json else { throw CatalogShapeError("\(path) is not an object") }
        let name = try object.string("name", at: path)
        let dateText = try object.string("date", at: path)
        guard let date = IssueDate(dateText) else {
            throw CatalogShapeError("\(path).date \(dateText.debugDescription) is not a YYYY-MM-DD date")
        }
        let folder = try object.string("folder", at: path)
        let stem = try object.optionalString("file", at: path)
        if let stem {
            guard Issue.isSafeFiledFolder(folder) else {
                throw CatalogShapeError("\(path).folder \(folder.debugDescription) is not a safe folder path")
            }
            guard SafePathComponent(validating: stem) != nil else {
                throw CatalogShapeError("\(path).file \(stem.debugDescription) is not a safe file name")
            }
        } else {
            guard SafePathComponent(validating: folder) != nil, !LibraryLayout.isReserved(folder) else {
                throw CatalogShapeError("\(path).folder \(folder.debugDescription) is not a safe folder name")
            }
        }
        self.init(name: name, date: date, folderName: folder, fileStem: stem)
        let statusText = try object.string("status", at: path)
        guard let status = Status(rawValue: statusText) else {
            throw CatalogShapeError("\(path).status \(statusText.debugDescription) is unknown")
        }
        self.status = status
        self.assets = try object.array("assets", at: path, optional: true).enumerated().map { index, value in
            try AssetDownload(json: value, at: "\(path).assets[\(index)]")
        }
        var ids = Set<String>()
        for asset in assets where !ids.insert(asset.id).inserted {
            throw CatalogShapeError("\(path) lists asset \(asset.id) twice")
        }
        self.isBeingRemoved = try object.optionalBool("removing", at: path) ?? false
        self.isPinned = try object.optionalBool("pinned", at: path) ?? false
        switch object["origin"] {
        case nil, .null?: self.origin = nil
        case .object(let origin)?:
            self.origin = Origin(
                subscriptionID: try origin.string("subscription", at: path + ".origin"),
                itemID: try origin.string("item", at: path + ".origin"),
                matchedBy: try origin.optionalString("matched", at: path + ".origin").flatMap(Issue.ItemMatch.init(rawValue:))
                    ?? .id)
        default: throw CatalogShapeError("\(path).origin is not an object")
        }
        self.publication = try object.optionalString("publication", at: path)
        // Records written before items' words were kept have no "source": read as none.
        switch object["source"] {
        case nil, .null?: self.source = nil
        case .object(let source)?:
            let item = SourceItem(
                title: try source.optionalString("title", at: path + ".source"),
                link: try source.optionalString("link", at: path + ".source"),
                description: try source.optionalString("description", at: path + ".source"))
            self.source = item.isEmpty ? nil : item
        default: throw CatalogShapeError("\(path).source is not an object")
        }
    }

    /// Writes the record object (no `directory`: that depends on where the library is opened).
    package func write(to writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("assets", first: true)
        writer.array(assets) { $1.write(to: &$0) }
        writer.key("date")
        writer.string(date.description)
        if let fileStem {
            writer.key("file")
            writer.string(fileStem)
        }
        writer.key("folder")
        writer.string(folderName)
        writer.key("name")
        writer.string(name)
        if let origin {
            writer.key("origin")
            writer.raw("{")
            writer.key("item", first: true)
            writer.string(origin.itemID)
            writer.key("matched")
            writer.string(origin.matchedBy.rawValue)
            writer.key("subscription")
            writer.string(origin.subscriptionID)
            writer.raw("}")
        }
        if isPinned {
            writer.key("pinned")
            writer.bool(true)
        }
        if let publication {
            writer.key("publication")
            writer.string(publication)
        }
        if isBeingRemoved {
            writer.key("removing")
            writer.bool(true)
        }
        if let source, !source.isEmpty {
            writer.key("source")
            var fields: [String: String] = [:]
            fields["description"] = source.description
            fields["link"] = source.link
            fields["title"] = source.title
            writer.stringObject(fields)
        }
        writer.key("status")
        writer.string(status.rawValue)
        writer.key("version")
        writer.integer(IssueRecord.version(of: self))
        writer.raw("}")
    }
}

extension AssetDownload {
    init(json: JSONValue, at path: String) throws {
        guard case .object(let object) = json else { throw CatalogShapeError("\(path) is not an object") }
        let id = try object.string("id", at: path)
        guard SafePathComponent(validating: id) != nil else {
            throw CatalogShapeError("\(path).id \(id.debugDescription) is not a safe identifier")
        }
        let urlText = try object.string("url", at: path)
        let url: URL
        do {
            url = try AssetRequest.parseURL(urlText)
        } catch let error as NewsstandError {
            throw CatalogShapeError("\(path).url: \(error.message)")
        }
        self.init(
            id: id, url: url, sha256: try object.optionalString("sha256", at: path),
            unpack: try object.optionalBool("unpack", at: path) ?? true)
        let stateText = try object.string("state", at: path)
        guard let state = State(rawValue: stateText) else {
            throw CatalogShapeError("\(path).state \(stateText.debugDescription) is unknown")
        }
        self.state = state
        self.receivedBytes = try object.optionalSize("receivedBytes", at: path) ?? 0
        self.expectedBytes = try object.optionalSize("expectedBytes", at: path)
        self.error = try object.optionalString("error", at: path)
        self.fileName = try object.optionalString("fileName", at: path)
        if let name = fileName, SafePathComponent(validating: name) == nil {
            throw CatalogShapeError("\(path).fileName \(name.debugDescription) is not a safe file name")
        }
        self.isArchive = try object.optionalBool("isArchive", at: path)
        // Records written before roles existed have none: content.
        if let roleText = try object.optionalString("role", at: path) {
            guard let role = Role(rawValue: roleText) else {
                throw CatalogShapeError("\(path).role \(roleText.debugDescription) is unknown")
            }
            self.role = role
        }
        switch object["userInfo"] {
        case nil, .null?: break
        case .object(let info)?:
            var userInfo: [String: String] = [:]
            for (key, value) in info {
                guard case .string(let text) = value else {
                    throw CatalogShapeError("\(path).userInfo.\(key) is not a string")
                }
                userInfo[key] = text
            }
            self.userInfo = userInfo
        default: throw CatalogShapeError("\(path).userInfo is not an object")
        }
        self.headers = try object.requestHeaders(at: path)
    }

    /// Writes the asset object. `error` and `expectedBytes` are always present (null when absent), as
    /// the `--json` output promises, so that output can copy stored records as they are.
    package func write(to writer: inout JSONWriter, receivedBytes liveReceived: Int64? = nil, expectedBytes liveExpected: Int64? = nil) {
        writer.raw("{")
        writer.key("error", first: true)
        writer.optionalString(error)
        writer.key("expectedBytes")
        writer.optionalInteger(liveExpected ?? expectedBytes)
        if let fileName {
            writer.key("fileName")
            writer.string(fileName)
        }
        if !headers.isEmpty {
            writer.key("headers")
            writer.stringObject(headers)
        }
        writer.key("id")
        writer.string(id)
        if let isArchive {
            writer.key("isArchive")
            writer.bool(isArchive)
        }
        writer.key("receivedBytes")
        writer.integer(liveReceived ?? receivedBytes)
        if role != .content {
            writer.key("role")
            writer.string(role.rawValue)
        }
        if let sha256 {
            writer.key("sha256")
            writer.string(sha256)
        }
        writer.key("state")
        writer.string(state.rawValue)
        writer.key("unpack")
        writer.bool(unpack)
        writer.key("url")
        writer.string(url.absoluteString)
        if !userInfo.isEmpty {
            writer.key("userInfo")
            writer.stringObject(userInfo)
        }
        writer.raw("}")
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// An asset's `"headers"` object, checked as an added asset's are (a damaged or hand-edited record
    /// cannot smuggle a line break into a request). Errors name the header, never its value.
    func requestHeaders(at path: String) throws -> [String: String] {
        switch self["headers"] {
        case nil, .null?: return [:]
        case .object(let object)?:
            var headers: [String: String] = [:]
            var seen = Set<String>()
            for (name, value) in object {
                guard case .string(let text) = value else {
                    throw CatalogShapeError("\(path).headers.\(name) is not a string")
                }
                if let problem = RequestHeaders.problem(name: name, value: text) {
                    throw CatalogShapeError("\(path).headers: \(name.debugDescription) \(problem)")
                }
                if !seen.insert(name.lowercased()).inserted {
                    throw CatalogShapeError("\(path).headers lists \(name.debugDescription) twice")
                }
                headers[name] = text
            }
            return headers
        default: throw CatalogShapeError("\(path).headers is not an object")
        }
    }
}
