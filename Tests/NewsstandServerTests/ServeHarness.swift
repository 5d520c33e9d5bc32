import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Newsstand
import NewsstandServer
import NewsstandTestSupport
import ServiceLifecycle

/// A running `issues serve` on an ephemeral 127.0.0.1 port over a temporary library, and a client for it.
struct Served: Sendable {
    let library: Library
    let port: Int
    let client: HTTPClient

    var base: String { "http://127.0.0.1:\(port)" }
    var origin: String { base }

    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var bytes: [UInt8]
    }

    /// One request; `headers` are sent as given (a `Host` among them replaces the client's).
    func request(
        _ method: HTTPMethod = .GET, _ path: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 64 << 20)
        let bytes = Array(buffer.readableBytesView)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(decoding: bytes, as: UTF8.self), bytes: bytes)
    }

    /// This run's CSRF token (GET /api/session).
    func csrfToken() async throws -> String {
        let answer = try await request(.GET, "/api/session")
        let object = try JSONSerialization.jsonObject(with: Data(answer.bytes)) as? [String: Any]
        return object?["csrfToken"] as? String ?? ""
    }

    /// A same-origin POST with the CSRF token, as the pages send it.
    func post(_ path: String, form: String = "", api: Bool = false) async throws -> Answer {
        let token = try await csrfToken()
        var headers = [("Origin", origin)]
        if api {
            headers.append(("X-CSRF-Token", token))
            headers.append(("Content-Type", "application/json"))
            return try await request(.POST, path, headers: headers, body: form)
        }
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        return try await request(.POST, path, headers: headers, body: form + (form.isEmpty ? "" : "&") + "csrf=\(token)")
    }
}

/// Runs `body` against a started server and always stops it (graceful shutdown, as SIGTERM does).
func withServer<T: Sendable>(
    host: String = "127.0.0.1", prepare: (Library) async throws -> Void = { _ in },
    _ body: (Served) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let library = try await Library.open(at: directory)
        try await prepare(library)
        var logger = Logger(label: "serve-test")
        logger.logLevel = .warning
        let server = try IssuesServer(library: library, options: ServeOptions(host: host, port: 0), logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let services = server.services { port in continuation.yield(port) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }, logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        // Redirects are answers under test, not followed.
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        let served = Served(library: library, port: port, client: client)
        let result: T
        do {
            result = try await body(served)
        } catch {
            try? await client.shutdown()
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            try? await library.shutdown()
            throw error
        }
        try await client.shutdown()
        await group.triggerGracefulShutdown()
        try await running.value
        try await library.shutdown()
        return result
    }
}

extension Library {
    /// The catalog key of `name`, as URLs carry it (read from the API, not computed here).
    func key(of name: String, served: Served) async throws -> String {
        let answer = try await served.request(.GET, "/api/issues?q=\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        let object = try JSONSerialization.jsonObject(with: Data(answer.bytes)) as? [String: Any]
        let items = object?["items"] as? [[String: Any]] ?? []
        let match = items.first { ($0["issue"] as? [String: Any])?["name"] as? String == name }
        return match?["key"] as? String ?? ""
    }
}
