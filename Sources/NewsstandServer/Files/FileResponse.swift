import Foundation
import HTTPTypes
import Hummingbird

#if canImport(Glibc)
    import Glibc
#endif

/// A file of the library as an HTTP response: `ETag` from the file's identity (inode, size, mtime),
/// `If-None-Match` → 304, one `Range` (`bytes=a-b`, `a-`, `-n`) → 206 with `Content-Range`, an
/// unsatisfiable one → 416, `If-Range` honoured; several ranges are answered whole (200), as RFC 9110 allows.
enum FileResponse {
    static let fileIO = FileIO()

    static func make(path: String, request: Request, context: ServeContext, contentType: String? = nil) async throws -> Response {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HTTPError(.notFound) }
        let size = Int(info.st_size)
        let etag = "\"\(String(info.st_ino, radix: 16))-\(String(size, radix: 16))-\(String(info.st_mtim.tv_sec, radix: 16))\(String(info.st_mtim.tv_nsec, radix: 16))\""
        let type = contentType ?? ContentType.of(path: path)
        var headers: HTTPFields = [
            .contentType: type, .eTag: etag, .acceptRanges: "bytes", .cacheControl: "private, no-cache",
            .contentSecurityPolicy: ContentType.isActive(type)
                // A page or drawing from a feed's archive may carry scripts: it runs sandboxed, with an opaque
                // origin, so it can never reach this server's pages, tokens or actions.
                ? "sandbox; default-src 'self' data: 'unsafe-inline'; script-src 'none'; connect-src 'none'; frame-ancestors 'self'"
                // Media and documents the browser shows itself (a sandbox would make their own request cross-origin).
                : "default-src 'self'; script-src 'none'; style-src 'self' 'unsafe-inline'; frame-ancestors 'self'",
        ]
        if let match = request.headers[.ifNoneMatch], matches(match, etag) {
            return Response(status: .notModified, headers: headers)
        }
        var range: ClosedRange<Int>?
        if let text = request.headers[.range], request.headers[.ifRange].map({ $0 == etag }) ?? true {
            switch parse(range: text, size: size) {
            case .whole: break
            case .part(let part): range = part
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
        }
        if request.method == .head {
            headers[.contentLength] = String(range.map { $0.count } ?? size)
            if let range { headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)" }
            return Response(status: range == nil ? .ok : .partialContent, headers: headers)
        }
        if let range {
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = String(range.count)
            let body = try await fileIO.loadFile(path: path, range: range, context: context)
            return Response(status: .partialContent, headers: headers, body: body)
        }
        headers[.contentLength] = String(size)
        let body = size == 0 ? ResponseBody() : try await fileIO.loadFile(path: path, context: context)
        return Response(status: .ok, headers: headers, body: body)
    }

    /// Whether an `If-None-Match` list names `etag` (or is `*`); weak tags compare by their value.
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            let tag = item.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    enum RangeAnswer: Equatable {
        case whole
        case part(ClosedRange<Int>)
        case unsatisfiable
    }

    /// Reads one `bytes=` range of a file of `size` bytes.
    static func parse(range text: String, size: Int) -> RangeAnswer {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst(6)
        if spec.contains(",") { return .whole }
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard bounds.count == 2 else { return .whole }
        if bounds[0].isEmpty {
            guard let suffix = Int(bounds[1]), suffix >= 0 else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)...(size - 1))
        }
        guard let first = Int(bounds[0]), first >= 0 else { return .whole }
        let last: Int
        if bounds[1].isEmpty {
            last = size - 1
        } else {
            guard let value = Int(bounds[1]), value >= first else { return .whole }
            last = min(value, size - 1)
        }
        guard first < size else { return .unsatisfiable }
        return .part(first...last)
    }
}
