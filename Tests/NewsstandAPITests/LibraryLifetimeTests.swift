import Foundation
import InMemoryLogging
import Logging
import Newsstand
import NewsstandTestSupport
import Testing

/// `withLibrary` always shuts down; a library dropped without `shutdown()` never traps.
@Suite(.timeLimit(.minutes(5))) struct LibraryLifetimeTests {
    struct Boom: Error {}

    @Test func withLibraryShutsDownAfterReturning() async throws {
        try await withTemporaryDirectory { root in
            let (logger, logs) = API.capturingLogger()
            let count = try await Library.withLibrary(at: root, configuration: API.configuration(), logger: logger) {
                library in
                try await library.addIssue(named: "A", date: API.date)
                return try await library.summaries().count
            }
            #expect(count == 1)
            #expect(logs.entries.contains { "\($0.message)" == "library shut down" })
        }
    }

    @Test func withLibraryShutsDownWhenTheBodyThrows() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: patternBytes(count: 10_000))
            try await withTemporaryDirectory { root in
                let (logger, logs) = API.capturingLogger()
                await #expect(throws: Boom.self) {
                    try await Library.withLibrary(at: root, configuration: API.configuration(), logger: logger) {
                        library in
                        try await library.addIssue(
                            named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/a.bin"))])
                        try await library.download()  // starts the HTTP clients that must be shut down
                        throw Boom()
                    }
                }
                #expect(logs.entries.contains { "\($0.message)" == "library shut down" })
            }
        }
    }

    @Test func withLibraryShutsDownWhenCancelledAndTheDownloadResumesAtOnce() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 2_000_000)
            server.serve("/slow.bin", bytes: body)
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 200_000))
            try await withTemporaryDirectory { root in
                let (logger, logs) = API.capturingLogger()
                let url = try API.url(server, "/slow.bin")
                let progressed = Signal()
                let task = Task {
                    try await Library.withLibrary(at: root, configuration: API.configuration(), logger: logger) {
                        library in
                        try await library.addIssue(named: "A", date: API.date, assets: [AssetRequest(url: url)])
                        return try await library.download { events in
                            for await event in events {
                                if case .progress = event.kind { progressed.fire() }
                            }
                        }
                    }
                }
                await progressed.wait()
                let cancelled = ContinuousClock.now
                task.cancel()
                let summary = try await task.value
                #expect(summary.interrupted.count == 1, "the 10 s transfer stopped early")
                #expect(ContinuousClock.now - cancelled < .seconds(5))
                #expect(logs.entries.contains { "\($0.message)" == "library shut down" })

                // Nothing of this process holds the asset any more: another library resumes it at once.
                server.setFaults("/slow.bin", .none)
                let resumed = try await Library.withLibrary(at: root, configuration: API.configuration()) {
                    try await $0.resumeDownloads()
                }
                #expect(resumed.finished.count == 1)
                #expect(resumed.skipped.isEmpty)
                #expect(server.requests("/slow.bin").last?.header("Range") != nil, "it resumed, not restarted")
            }
        }
    }

    /// AsyncHTTPClient traps in debug builds when a client is deinitialised without being shut down; the
    /// library's engine shuts its clients down itself when the library is dropped. (This test binary is
    /// a debug build: a trap would end it.)
    @Test func libraryDroppedWithoutShutdownDoesNotTrap() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: patternBytes(count: 10_000))
            try await withTemporaryDirectory { root in
                let (logger, logs) = API.capturingLogger()
                try await downloadWithoutShutdown(root: root, url: try API.url(server, "/a.bin"), logger: logger)
                // The library is gone; its engine shut its client down in the background.
                #expect(try await API.waitForLog(logs, containing: "HTTP client of a dropped library shut down"))
            }
        }
    }

    private func downloadWithoutShutdown(root: URL, url: URL, logger: Logger) async throws {
        let library = try await Library.open(at: root, configuration: API.configuration(), logger: logger)
        try await library.addIssue(named: "A", date: API.date, assets: [AssetRequest(url: url)])
        let summary = try await library.download()
        #expect(summary.finished.count == 1)
    }
}
