import Foundation
import NewsstandTestSupport
import Testing

/// The README's API example is `Samples/API/main.swift`, which is built as `api-sample` and run here.
@Suite(.timeLimit(.minutes(5))) struct ReadmeSampleTests {
    static let root = CommandRunner.packageRoot

    /// The `api-sample` executable built next to the test bundle.
    static var binary: String {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("api-sample").path,
            URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
                .appendingPathComponent("api-sample").path,
            root.appendingPathComponent(".build/debug/api-sample").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[2]
    }

    /// The first Swift block of the README's "## The library API" section.
    static func readmeExample() throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "\n## The library API\n"))
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```\n"))
        return String(rest[open.upperBound..<close.lowerBound]) + "\n"
    }

    @Test func readmeExampleIsTheSampleFile() throws {
        let sample = try String(
            contentsOf: Self.root.appendingPathComponent("Samples/API/main.swift"), encoding: .utf8)
        #expect(try Self.readmeExample() == sample)
    }

    @Test func sampleDownloadsAndExitsZeroThenRunsAgain() async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 50_000)
            server.serve("/daily/today.pdf", bytes: body)
            try await withTemporaryDirectory { root in
                let library = root.appendingPathComponent("library").path
                let first = try CommandRunner.run(
                    Self.binary, [library, server.url("/daily/today.pdf")], environment: CommandRunner.environment())
                #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
                let line = try #require(first.stdout.split(separator: "\n").first { $0.hasPrefix("downloaded /") })
                let path = String(line.dropFirst("downloaded ".count))
                #expect(path.hasSuffix("/today.pdf"))
                #expect(FileManager.default.contents(atPath: path) == Data(body))
                // The issue exists now: a second run must neither trap on it nor fail.
                let second = try CommandRunner.run(
                    Self.binary, [library, server.url("/daily/today.pdf")], environment: CommandRunner.environment())
                #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
                #expect(!second.signalled)
            }
        }
    }

    @Test func sampleExitsNonZeroWhenTheDownloadFails() async throws {
        try await withTestServer { server in
            server.setFaults("/daily/missing.pdf", Faults(status: 404))
            try await withTemporaryDirectory { root in
                let result = try CommandRunner.run(
                    Self.binary, [root.appendingPathComponent("library").path, server.url("/daily/missing.pdf")],
                    environment: CommandRunner.environment())
                #expect(result.status == 1)
                #expect(!result.signalled)
                #expect(result.stdout.contains("error: \(server.url("/daily/missing.pdf")) answered 404 Not Found"))
            }
        }
    }
}
