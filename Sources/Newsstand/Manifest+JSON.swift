import Foundation

/// `library.json` <-> `Manifest` through the fast reader and writer in `Internal/JSON.swift`.
/// The layout matches what `JSONEncoder` with sorted keys produced, so either can read the other's files.
extension Manifest {
    /// Decodes a manifest, refusing unknown future versions before looking at anything else.
    /// - Throws: `NewsstandError` `.manifestUnreadable` or `.manifestFromNewerVersion`, naming `path`.
    static func decode(_ data: Data, path: String) throws -> Manifest {
        let root: JSONValue
        do {
            root = try data.withUnsafeBytes { raw in
                try JSONReader.parse(
                    UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count))
            }
        } catch {
            throw NewsstandError(
                .manifestUnreadable, "\(path) is not a valid library manifest (\(error)); it was left untouched",
                underlying: error)
        }
        do {
            guard case .object(let object) = root else { throw ManifestShapeError("the document is not an object") }
            guard case .integer(let version)? = object["version"] else {
                throw ManifestShapeError("no integer \"version\"")
            }
            guard version >= 1 else { throw ManifestShapeError("\"version\" \(version) is not a valid version") }
            guard version <= Int64(currentVersion) else {
                throw NewsstandError(
                    .manifestFromNewerVersion,
                    "\(path) has version \(version), newer than this issues understands (\(currentVersion)); it was left untouched"
                )
            }
            var manifest = Manifest()
            manifest.issues = try object.array("issues", at: "").enumerated().map { index, value in
                try Issue(json: value, at: "issues[\(index)]")
            }
            manifest.pendingDownloads = try object.array("pendingDownloads", at: "").enumerated().map { index, value in
                guard case .string(let id) = value else {
                    throw ManifestShapeError("pendingDownloads[\(index)] is not a string")
                }
                return id
            }
            try manifest.validate(path: path)
            return manifest
        } catch let error as NewsstandError {
            throw error
        } catch {
            throw NewsstandError(
                .manifestUnreadable, "\(path) is not a valid library manifest (\(error)); it was left untouched",
                underlying: error)
        }
    }

    /// The manifest as JSON text with sorted keys, one trailing newline.
    func encoded() throws -> Data {
        var writer = JSONWriter(capacity: 128 + issues.count * 160)
        writer.raw("{")
        writer.key("issues", first: true)
        writer.array(issues) { $1.write(to: &$0) }
        writer.key("pendingDownloads")
        writer.array(pendingDownloads) { $0.string($1) }
        writer.key("version")
        writer.integer(Int64(version))
        writer.raw("}\n")
        return Data(writer.bytes)
    }

    /// Checks the invariants JSON types cannot express: unique names, folders and identifiers.
    func validate(path: String) throws {
        var names = Set<String>()
        var folders = Set<String>()
        var ids = Set<String>()
        for issue in issues {
            guard names.insert(issue.name).inserted, folders.insert(issue.folderName).inserted else {
                throw NewsstandError(
                    .manifestUnreadable,
                    "\(path) lists issue \(issue.name.debugDescription) or its folder twice; it was left untouched")
            }
            for asset in issue.assets where !ids.insert(asset.id).inserted {
                throw NewsstandError(
                    .manifestUnreadable, "\(path) lists asset \(asset.id) twice; it was left untouched")
            }
        }
    }
}

struct ManifestShapeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == JSONValue {
    func string(_ key: String, at path: String) throws -> String {
        guard case .string(let value)? = self[key] else {
            throw ManifestShapeError("\(path).\(key) is missing or not a string")
        }
        return value
    }

    func optionalString(_ key: String, at path: String) throws -> String? {
        switch self[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw ManifestShapeError("\(path).\(key) is not a string")
        }
    }

    func optionalInteger(_ key: String, at path: String) throws -> Int64? {
        switch self[key] {
        case nil, .null?: return nil
        case .integer(let value)?: return value
        default: throw ManifestShapeError("\(path).\(key) is not an integer")
        }
    }

    func optionalBool(_ key: String, at path: String) throws -> Bool? {
        switch self[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw ManifestShapeError("\(path).\(key) is not true or false")
        }
    }

    func array(_ key: String, at path: String, optional: Bool = false) throws -> [JSONValue] {
        switch self[key] {
        case .array(let values)?: return values
        case nil where optional, .null? where optional: return []
        default: throw ManifestShapeError("\(path.isEmpty ? "" : path + ".")\(key) is missing or not an array")
        }
    }
}

extension Issue {
    init(json: JSONValue, at path: String) throws {
        guard case .object(let object) = json else { throw ManifestShapeError("\(path) is not an object") }
        let name = try object.string("name", at: path)
        let dateText = try object.string("date", at: path)
        guard let date = IssueDate(dateText) else {
            throw ManifestShapeError("\(path).date \(dateText.debugDescription) is not a YYYY-MM-DD date")
        }
        let folder = try object.string("folder", at: path)
        guard SafePathComponent(validating: folder) != nil, !LibraryLayout.isReserved(folder) else {
            throw ManifestShapeError("\(path).folder \(folder.debugDescription) is not a safe folder name")
        }
        self.init(name: name, date: date, folderName: folder)
        let statusText = try object.string("status", at: path)
        guard let status = Status(rawValue: statusText) else {
            throw ManifestShapeError("\(path).status \(statusText.debugDescription) is unknown")
        }
        self.status = status
        self.assets = try object.array("assets", at: path, optional: true).enumerated().map { index, value in
            try AssetDownload(json: value, at: "\(path).assets[\(index)]")
        }
        self.isBeingRemoved = try object.optionalBool("removing", at: path) ?? false
    }

    func write(to writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("assets", first: true)
        writer.array(assets) { $1.write(to: &$0) }
        writer.key("date")
        writer.string(date.description)
        writer.key("folder")
        writer.string(folderName)
        writer.key("name")
        writer.string(name)
        if isBeingRemoved {
            writer.key("removing")
            writer.bool(true)
        }
        writer.key("status")
        writer.string(status.rawValue)
        writer.raw("}")
    }
}

extension AssetDownload {
    init(json: JSONValue, at path: String) throws {
        guard case .object(let object) = json else { throw ManifestShapeError("\(path) is not an object") }
        let id = try object.string("id", at: path)
        guard SafePathComponent(validating: id) != nil else {
            throw ManifestShapeError("\(path).id \(id.debugDescription) is not a safe identifier")
        }
        let urlText = try object.string("url", at: path)
        guard let url = URL(string: urlText) else {
            throw ManifestShapeError("\(path).url \(urlText.debugDescription) is not a URL")
        }
        self.init(
            id: id, url: url, sha256: try object.optionalString("sha256", at: path),
            unpack: try object.optionalBool("unpack", at: path) ?? true)
        let stateText = try object.string("state", at: path)
        guard let state = State(rawValue: stateText) else {
            throw ManifestShapeError("\(path).state \(stateText.debugDescription) is unknown")
        }
        self.state = state
        self.receivedBytes = try object.optionalInteger("receivedBytes", at: path) ?? 0
        self.expectedBytes = try object.optionalInteger("expectedBytes", at: path)
        self.error = try object.optionalString("error", at: path)
        self.fileName = try object.optionalString("fileName", at: path)
        if let name = fileName, SafePathComponent(validating: name) == nil {
            throw ManifestShapeError("\(path).fileName \(name.debugDescription) is not a safe file name")
        }
        self.isArchive = try object.optionalBool("isArchive", at: path)
        switch object["userInfo"] {
        case nil, .null?, .object?: break
        default: throw ManifestShapeError("\(path).userInfo is not an object")
        }
        if case .object(let info)? = object["userInfo"] {
            var userInfo: [String: String] = [:]
            for (key, value) in info {
                guard case .string(let text) = value else {
                    throw ManifestShapeError("\(path).userInfo.\(key) is not a string")
                }
                userInfo[key] = text
            }
            self.userInfo = userInfo
        }
    }

    func write(to writer: inout JSONWriter) {
        writer.raw("{")
        if let error {
            writer.key("error", first: true)
            writer.string(error)
            writer.raw(",")
        }
        if let expectedBytes {
            writer.key("expectedBytes", first: true)
            writer.integer(expectedBytes)
            writer.raw(",")
        }
        if let fileName {
            writer.key("fileName", first: true)
            writer.string(fileName)
            writer.raw(",")
        }
        writer.key("id", first: true)
        writer.string(id)
        if let isArchive {
            writer.key("isArchive")
            writer.bool(isArchive)
        }
        writer.key("receivedBytes")
        writer.integer(receivedBytes)
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
            writer.raw("{")
            for (index, key) in userInfo.keys.sorted().enumerated() {
                if index > 0 { writer.raw(",") }
                writer.string(key)
                writer.raw(":")
                writer.string(userInfo[key] ?? "")
            }
            writer.raw("}")
        }
        writer.raw("}")
    }
}
