import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Every request passes here first: the `Host` allowlist (421), the access token beyond loopback (401, or
/// the login page), the same-origin check and CSRF token of every state-changing request (403), and the
/// headers every response carries (a nonce CSP, `nosniff`, no framing).
struct SecurityMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let policy: SecurityPolicy

    /// Paths reachable without the access token: the login page and what it needs.
    private static let publicPaths: Set<String> = ["/login", "/static/app.css", "/static/app.js"]

    func handle(
        _ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.nonce = AccessToken.randomHex(bytes: 16)
        let path = request.uri.path
        let isAPI = path.hasPrefix("/api/")
        guard let authority = request.head.authority, policy.allows(authority: authority) else {
            return ErrorResponse.make(
                status: .misdirectedRequest, code: "misdirectedRequest",
                message: "this server does not answer for the host \((request.head.authority ?? "").debugDescription)",
                api: true, nonce: context.nonce)
        }
        context.authority = authority
        if isAPI, let allowed = APIMethods.allowed(path: path), !allowed.contains(request.method) {
            var response = ErrorResponse.make(
                status: .methodNotAllowed, code: "methodNotAllowed",
                message: "\(path) does not take \(request.method.rawValue)", api: true, nonce: context.nonce)
            response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
            Self.addHeaders(&response, nonce: context.nonce)
            return response
        }
        var request = request
        var response: Response
        do {
            if let token = policy.accessToken, !Self.publicPaths.contains(path), !Self.authorised(request, token: token) {
                if Self.isReaderPath(path), request.method == .get || request.method == .head {
                    // Podcast apps and OPDS readers show no login page but ask for a user name and password on
                    // a Basic challenge (the token is the password), and send it again for the enclosures.
                    response = ErrorResponse.make(
                        status: .unauthorized, code: "unauthorized",
                        message: "this server needs its access token: give it as the password (any user name)",
                        api: false, nonce: context.nonce)
                    response.headers[.wwwAuthenticate] = "Basic realm=\"issues\", charset=\"UTF-8\""
                } else if isAPI || request.method != .get {
                    response = ErrorResponse.make(
                        status: .unauthorized, code: "unauthorized",
                        message: "this server needs its access token (Authorization: Bearer TOKEN, or log in at /login)",
                        api: isAPI, nonce: context.nonce)
                    response.headers[.wwwAuthenticate] = "Bearer"
                } else {
                    response = Response(status: .seeOther, headers: [.location: "/login"])
                }
            } else if request.method != .get && request.method != .head {
                if let refusal = try await Self.refuseCrossSite(&request, authority: authority, policy: policy) {
                    response = ErrorResponse.make(status: .forbidden, code: "forbidden", message: refusal, api: isAPI, nonce: context.nonce)
                } else {
                    response = try await next(request, context)
                }
            } else {
                response = try await next(request, context)
            }
        } catch {
            response = ErrorResponse.make(for: error, api: isAPI, nonce: context.nonce)
        }
        Self.addHeaders(&response, nonce: context.nonce)
        return response
    }

    /// What feed readers fetch: the OPDS catalogue, the RSS feeds out, and the files and covers they link.
    private static func isReaderPath(_ path: String) -> Bool {
        path == "/opds" || path.hasPrefix("/opds/") || path.hasPrefix("/feeds/") || path.hasPrefix("/files/")
            || path.hasPrefix("/covers/")
    }

    /// Bearer header, Basic credentials whose password is the token (what feed readers can send), or the
    /// login cookie. Basic needs no exemption from the CSRF check: every change is checked whatever its
    /// credentials, and a browser that remembers Basic credentials still sends no CSRF token from another site.
    private static func authorised(_ request: Request, token: String) -> Bool {
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            return AccessToken.equal(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces), token)
        }
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("basic ") {
            let encoded = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
            guard let decoded = Data(base64Encoded: encoded), let pair = String(data: decoded, encoding: .utf8),
                let colon = pair.firstIndex(of: ":")
            else { return false }
            return AccessToken.equal(String(pair[pair.index(after: colon)...]), token)
        }
        if let cookie = Self.cookie("issues_token", in: request) { return AccessToken.equal(cookie, token) }
        return false
    }

    static func cookie(_ name: String, in request: Request) -> String? {
        for field in request.headers[values: .cookie] {
            for part in field.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == name {
                    return String(pair[1]).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// Why a state-changing request is refused, or nil: it must come from this origin (`Origin`, else
    /// `Referer`) and carry this run's CSRF token (header, query or form field). The body of a form is
    /// collected here (so the handler reads it again from memory).
    private static func refuseCrossSite(
        _ request: inout Request, authority: String, policy: SecurityPolicy
    ) async throws -> String? {
        if let origin = request.headers[.origin] {
            if !SecurityPolicy.sameOrigin(origin, authority: authority) {
                return "a change must come from this server's own pages (Origin \(origin.debugDescription))"
            }
        } else if let referer = request.headers[.referer] {
            if !SecurityPolicy.sameOrigin(referer, authority: authority) {
                return "a change must come from this server's own pages (Referer \(referer.debugDescription))"
            }
        } else {
            return "a change needs an Origin or Referer header naming this server"
        }
        var presented = request.headers[HTTPField.Name.csrfToken]
        if presented == nil, let query = request.uri.query { presented = Form.parse(query[...])["csrf"] }
        if presented == nil, request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
            let body = try await request.collectBody(upTo: 1 << 20)
            presented = Form.parse(String(buffer: body)[...])["csrf"]
        }
        guard let presented, AccessToken.equal(presented, policy.csrfToken) else {
            return "the CSRF token is missing or stale: reload the page (or send X-CSRF-Token from GET /api/session)"
        }
        return nil
    }

    private static func addHeaders(_ response: inout Response, nonce: String) {
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] =
                "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; img-src 'self' data:; "
                + "media-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "same-origin"
        response.headers[.crossOriginResourcePolicy] = "same-origin"
    }
}

extension HTTPField.Name {
    // Literal, valid names: the initialiser fails only on characters these do not have.
    static let csrfToken = HTTPField.Name("X-CSRF-Token") ?? .authorization
    static let lastEventID = HTTPField.Name("Last-Event-ID") ?? .authorization
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options") ?? .authorization
    static let referrerPolicy = HTTPField.Name("Referrer-Policy") ?? .authorization
}
