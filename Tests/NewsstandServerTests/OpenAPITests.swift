import Foundation
import NIOHTTP1
import Newsstand
import NewsstandTestSupport
import Testing

/// The served OpenAPI document is the committed one, and responses match it (a small JSON Schema check:
/// type, required, properties, items, enum, $ref — what the document uses). schemathesis goes further
/// (`make api-test`).
@Suite(.timeLimit(.minutes(3)))
struct OpenAPITests {
    static let committed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/NewsstandServer/API/openapi.json").standardizedFileURL

    @Test func servedDocumentIsTheCommittedOne() async throws {
        try await withServer { served in
            let answer = try await served.request(.GET, "/api/openapi.json")
            #expect(answer.status == 200)
            let file = try Data(contentsOf: Self.committed)
            #expect(Data(answer.bytes) == file)
            let object = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
            #expect(object["openapi"] as? String == "3.1.0")
        }
    }

    @Test func responsesMatchTheDocument() async throws {
        try await withServer(prepare: ServerTests.prepare) { served in
            let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.committed)) as? [String: Any])
            let key = try await served.library.key(of: "Daily Loop 2026-11-19", served: served)
            let cases: [(String, String, String)] = [
                ("/api/session", "/api/session", "get"),
                ("/api/issues", "/api/issues", "get"),
                ("/api/issues", "/api/issues?status=new&limit=5", "get"),
                ("/api/issues", "/api/issues?since=0", "get"),
                ("/api/issues", "/api/issues?limit=9999", "get"),
                ("/api/issues/{key}", "/api/issues/\(key)", "get"),
                ("/api/issues/{key}", "/api/issues/nope", "get"),
                ("/api/issues/{key}/assets", "/api/issues/\(key)/assets", "get"),
                ("/api/subscriptions", "/api/subscriptions", "get"),
                ("/api/events", "/api/events?since=0", "get"),
                ("/api/events", "/api/events?since=-1", "get"),
            ]
            for (template, path, method) in cases {
                let answer = try await served.request(.GET, path)
                let schema = try #require(Self.schema(document, template, method, answer.status), "\(path): \(answer.status) not documented")
                let value = try JSONDecoder().decode(JSONValue.self, from: Data(answer.bytes))
                let problems = Self.validate(value, schema, document, at: "$")
                #expect(problems.isEmpty, "\(path): \(problems)")
            }
            let pinned = try await served.post("/api/issues/\(key)/pin", api: true)
            let schema = try #require(Self.schema(document, "/api/issues/{key}/{action}", "post", pinned.status))
            #expect(Self.validate(try JSONDecoder().decode(JSONValue.self, from: Data(pinned.bytes)), schema, document, at: "$").isEmpty)
        }
    }

    static func schema(_ document: [String: Any], _ path: String, _ method: String, _ status: Int) -> [String: Any]? {
        guard let paths = document["paths"] as? [String: Any], let item = paths[path] as? [String: Any],
            let operation = item[method] as? [String: Any], let responses = operation["responses"] as? [String: Any],
            var response = responses[String(status)] as? [String: Any]
        else { return nil }
        if let reference = response["$ref"] as? String { response = resolve(reference, document) ?? [:] }
        return ((response["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
    }

    static func resolve(_ reference: String, _ document: [String: Any]) -> [String: Any]? {
        var node: Any = document
        for part in reference.dropFirst(2).split(separator: "/") {
            guard let object = node as? [String: Any], let next = object[String(part)] else { return nil }
            node = next
        }
        return node as? [String: Any]
    }

    static func validate(_ value: JSONValue, _ schema: [String: Any], _ document: [String: Any], at path: String) -> [String] {
        if let reference = schema["$ref"] as? String {
            guard let target = resolve(reference, document) else { return ["\(path): unresolved \(reference)"] }
            return validate(value, target, document, at: path)
        }
        var problems: [String] = []
        let types: [String] = (schema["type"] as? [String]) ?? ((schema["type"] as? String).map { [$0] } ?? [])
        if !types.isEmpty && !types.contains(where: { value.matches(type: $0) }) {
            return ["\(path): \(value) is not \(types)"]
        }
        if let options = schema["enum"] as? [String], case .string(let text) = value, !options.contains(text) {
            problems.append("\(path): \(text) not in \(options)")
        }
        if case .object(let object) = value {
            for required in schema["required"] as? [String] ?? [] where object[required] == nil {
                problems.append("\(path): missing \(required)")
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (name, child) in object {
                if let childSchema = properties[name] as? [String: Any] {
                    problems += validate(child, childSchema, document, at: "\(path).\(name)")
                }
            }
        }
        if case .array(let array) = value, let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() {
                problems += validate(element, items, document, at: "\(path)[\(index)]")
            }
        }
        return problems
    }
}

/// A JSON value as decoded, keeping booleans apart from numbers and integers apart from fractions.
indirect enum JSONValue: Decodable, CustomStringConvertible {
    case null, bool(Bool), integer(Int64), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func matches(type: String) -> Bool {
        switch (type, self) {
        case ("null", .null), ("boolean", .bool), ("integer", .integer), ("number", .integer), ("number", .number),
            ("string", .string), ("array", .array), ("object", .object):
            return true
        default:
            return false
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): value.debugDescription
        case .array(let value): "array of \(value.count)"
        case .object(let value): "object with \(value.keys.sorted())"
        }
    }
}
