import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Building responses: HTML pages, redirects after a form, JSON with an `ETag` (and 304 when the client
/// has it), and reading a form's fields.
enum Responses {
    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// 303 See Other: the browser GETs `location` after a form's POST.
    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// A JSON body with a strong `ETag` of its bytes; a GET whose `If-None-Match` names it is answered 304.
    static func json<Value: Encodable>(
        _ value: Value, request: Request, status: HTTPResponse.Status = .ok
    ) throws -> Response {
        let data = try JSON.encoder.encode(value)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-cache"]
        if request.method == .get || request.method == .head {
            var hash: UInt64 = 14_695_981_039_346_656_037
            for byte in data { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
            let etag = "\"\(String(hash, radix: 16))-\(String(data.count, radix: 16))\""
            headers[.eTag] = etag
            if let match = request.headers[.ifNoneMatch], FileResponse.matches(match, etag) {
                return Response(status: .notModified, headers: headers)
            }
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The fields of an urlencoded form body (already collected by the security middleware).
    static func form(_ request: inout Request) async throws -> [String: String] {
        let body = try await request.collectBody(upTo: 4 << 20)
        return Form.parse(String(buffer: body)[...])
    }

    /// The query string's parameters.
    static func query(_ request: Request) -> [String: String] {
        Form.parse((request.uri.query ?? "")[...])
    }

    /// The path's components after `prefix` components, still percent-encoded.
    static func components(_ request: Request) -> [Substring] {
        request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
    }
}
