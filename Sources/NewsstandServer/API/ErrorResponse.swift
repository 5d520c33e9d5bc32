import Foundation
import HTTPTypes
import Hummingbird
import NewsstandCore

/// The one error shape of the API, `{"error":{"code":"issueNotFound","message":"…"}}`, whose `message` is
/// the line the CLI prints after `error: ` for the same failure; pages show the same message in HTML.
struct APIError: Codable, Sendable {
    struct Body: Codable, Sendable {
        var code: String
        var message: String
    }
    var error: Body
}

enum ErrorResponse {
    /// The response for a failure thrown by a handler.
    static func make(for error: any Error, api: Bool, nonce: String) -> Response {
        switch error {
        case let error as NewsstandError:
            return make(status: status(of: error.code), code: error.code.description, message: error.description, api: api, nonce: nonce)
        case let error as QueryError:
            return make(status: .badRequest, code: "badRequest", message: error.description, api: api, nonce: nonce)
        case let error as HTTPError:
            return make(status: error.status, code: "http\(error.status.code)", message: error.body ?? error.status.reasonPhrase, api: api, nonce: nonce)
        case let error as any HTTPResponseError:
            // Hummingbird's and NIO's own errors: a body past the 1 MiB every route collects (NIOTooManyBytesError)
            // is the client's mistake, said plainly.
            let message =
                error.status == .contentTooLarge ? "the request body is larger than 1 MiB" : error.status.reasonPhrase
            return make(status: error.status, code: "http\(error.status.code)", message: message, api: api, nonce: nonce)
        default:
            // Never a Swift debug description to a client: the type says enough to find it in the log.
            return make(
                status: .internalServerError, code: "internal", message: "internal error (\(type(of: error)))", api: api,
                nonce: nonce)
        }
    }

    /// The HTTP status of a library failure.
    static func status(of code: NewsstandError.Code) -> HTTPResponse.Status {
        switch code {
        case .issueNotFound, .subscriptionNotFound: return .notFound
        case .duplicateIssue, .duplicateSubscription: return .conflict
        case .invalidIssueName, .invalidURL, .invalidChecksum, .invalidHeader, .invalidImport, .invalidMapping,
            .invalidFeed, .unsafeFeed, .invalidConfiguration:
            return .badRequest
        case .httpStatus, .network, .tooManyRedirects: return .badGateway
        case .subscriptionGone: return .gone
        case .insufficientSpace, .diskFull: return HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
        default: return .internalServerError
        }
    }

    static func make(status: HTTPResponse.Status, code: String, message: String, api: Bool, nonce: String) -> Response {
        if api {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = (try? encoder.encode(APIError(error: .init(code: code, message: message)))) ?? Data("{}".utf8)
            return Response(
                status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        let body = """
            <h1>\(status.code) \(HTML.escape(status.reasonPhrase))</h1>
            <p class="error" role="alert">error: \(HTML.escape(message))</p>
            <p><a href="/">Back to the shelf</a></p>
            """
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: HTML.page(title: "Error", nonce: nonce, csrf: "", current: "", body: body))))
    }
}
