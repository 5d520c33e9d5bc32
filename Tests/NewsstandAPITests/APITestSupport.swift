import Foundation
import InMemoryLogging
import Logging
import Newsstand
import NewsstandTestSupport
import Synchronization
import Testing

/// Shared set-up of the public-API tests: everything here goes through `import Newsstand` alone.
enum API {
    static let date = IssueDate(year: 2026, month: 11, day: 20)!

    /// Fast retries and no fsync, so that fault tests do not wait on production settings.
    static func configuration(readTimeout: Duration = .seconds(60)) -> Library.Configuration {
        var configuration = Library.Configuration()
        configuration.retry = RetryPolicy(
            maxAttemptsWithoutProgress: 3, baseDelay: .milliseconds(20), maxDelay: .milliseconds(100))
        configuration.syncDownloads = false
        configuration.readTimeout = readTimeout
        return configuration
    }

    static func url(_ server: TestHTTPServer, _ path: String) throws -> URL {
        try #require(URL(string: server.url(path)))
    }

    /// A logger whose debug entries a test can read.
    static func capturingLogger() -> (Logger, InMemoryLogHandler) {
        var handler = InMemoryLogHandler()
        handler.logLevel = .debug
        let captured = handler
        return (Logger(label: "api-tests") { _ in captured }, handler)
    }

    /// Waits up to `timeout` for a log message containing `text`.
    static func waitForLog(_ handler: InMemoryLogHandler, containing text: String, timeout: Duration = .seconds(5))
        async throws -> Bool
    {
        do {
            try await waitUntil("a log line containing \(text)", timeout: timeout) {
                handler.entries.contains(where: { "\($0.message)".contains(text) })
            }
            return true
        } catch is TimeoutError {
            return false
        }
    }
}

/// A signal one task gives and another waits for.
final class Signal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Void>.makeStream()
    }

    func fire() { continuation.yield() }

    func wait() async {
        for await _ in stream { return }
    }
}
