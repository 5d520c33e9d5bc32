import Foundation
import Hummingbird
import NIOCore
import Newsstand
import NewsstandDownload

/// `/files/KEY/PATH…`: a file inside the issue's folder (Range, ETag, Content-Type); `/covers/KEY`: its
/// cover or a placeholder.
enum FileRoutes {
    static func add(to router: Router<ServeContext>, state: ServerState) {
        router.get("/files/**") { request, context -> Response in
            try await file(request: request, context: context, state: state)
        }
        router.head("/files/**") { request, context -> Response in
            try await file(request: request, context: context, state: state)
        }
        router.get("/covers/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let issue = try await state.requireIssue(key: key)
            let width = Responses.query(request)["size"] == "1024" ? 1024 : 256
            if let path = Covers.file(in: state.directory(of: issue), names: state.library.coverNames(for: issue), width: width) {
                return try await FileResponse.make(path: path, request: request, context: context)
            }
            let svg = Covers.placeholder(title: issue.name, date: issue.date.description, publication: issue.publicationName)
            return Response(
                status: .ok,
                headers: [.contentType: "image/svg+xml", .cacheControl: "private, no-cache", .contentSecurityPolicy: "default-src 'none'"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: svg)))
        }
    }

    private static func file(request: Request, context: ServeContext, state: ServerState) async throws -> Response {
        // The raw path, split before decoding: an encoded `/` (`%2F`) stays inside its component and is refused.
        let components = Responses.components(request)
        guard components.count >= 3, components[0] == "files" else { throw HTTPError(.notFound) }
        let issue = try await state.requireIssue(key: String(components[1]))
        let directory = state.directory(of: issue)
        let rest = Array(components.dropFirst(2))
        // A filed issue's folder is shared: only its own files are its to serve.
        if issue.isFiled, rest.count != 1 || !issue.filedNames.contains(rest[0].removingPercentEncoding ?? "") {
            throw HTTPError(.notFound, message: "no such file in this issue")
        }
        guard let path = try await runBlocking({ SafePath.resolve(rest, inside: directory) }) else {
            throw HTTPError(.notFound, message: "no such file in this issue")
        }
        return try await FileResponse.make(path: path, request: request, context: context)
    }
}
