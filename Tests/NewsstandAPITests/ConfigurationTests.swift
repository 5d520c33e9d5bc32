import AsyncHTTPClient
import Foundation
import NIOCore
import Newsstand
import NewsstandTestSupport
import Testing

/// Timeouts are used to the millisecond; an injected client's own settings replace the library's.
@Suite(.timeLimit(.minutes(5))) struct ConfigurationTests {
    /// A body that drips one byte every half second: a read timeout under that fires between bytes.
    static func drip(_ server: TestHTTPServer) {
        server.serve("/drip.bin", bytes: patternBytes(count: 3))
        server.setFaults("/drip.bin", Faults(bytesPerSecond: 2))
    }

    static func timeouts(in events: [DownloadEvent]) -> Int {
        events.filter { if case .retrying(_, _, let reason) = $0.kind { reason.contains("timed out") } else { false } }
            .count
    }

    static func run(_ server: TestHTTPServer, root: URL, configuration: Library.Configuration) async throws
        -> ([DownloadEvent], DownloadSummary)
    {
        try await Library.withLibrary(at: root, configuration: configuration) { library in
            try await library.addIssue(
                named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/drip.bin"))])
            var events: [DownloadEvent] = []
            let summary = try await library.download { for await event in $0 { events.append(event) } }
            return (events, summary)
        }
    }

    @Test func aSubSecondReadTimeoutIsNotRoundedDown() async throws {
        try await withTestServer { server in
            Self.drip(server)
            try await withTemporaryDirectory { root in
                // 900 ms outlasts each half-second gap; rounded down to whole seconds it would be 0.
                let (events, summary) = try await Self.run(
                    server, root: root, configuration: API.configuration(readTimeout: .milliseconds(900)))
                #expect(summary.finished.count == 1)
                #expect(Self.timeouts(in: events) == 0)
            }
        }
    }

    @Test func aShortReadTimeoutFiresBetweenBytes() async throws {
        try await withTestServer { server in
            Self.drip(server)
            try await withTemporaryDirectory { root in
                let (events, _) = try await Self.run(
                    server, root: root, configuration: API.configuration(readTimeout: .milliseconds(200)))
                #expect(Self.timeouts(in: events) > 0)
            }
        }
    }

    @Test func anInjectedClientBringsItsOwnTimeouts() async throws {
        try await withTestServer { server in
            Self.drip(server)
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: HTTPClient.Configuration(timeout: .init(read: .milliseconds(200))))
            do {
                try await withTemporaryDirectory { root in
                    // The library's own read timeout (a minute) is not used: the client's 200 ms is.
                    var configuration = API.configuration(readTimeout: .seconds(60))
                    configuration.httpClient = client
                    let (events, _) = try await Self.run(server, root: root, configuration: configuration)
                    #expect(Self.timeouts(in: events) > 0)
                }
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }
}
