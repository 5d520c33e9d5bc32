import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

/// Per-asset request headers: sent where they belong, stored, never shown in full.
@Suite(.timeLimit(.minutes(5))) struct RequestHeaderTests {
    static let token = "Bearer s3cr3t-t0ken-value"
    static let headers = ["Authorization": token, "Cookie": "session=abc123", "X-Edition": "morning"]

    @Test func sentOnEveryRequestOfTheAssetIncludingRetries() async throws {
        try await withTestServer { server in
            server.serve("/paid.pdf", bytes: patternBytes(count: 20_000))
            server.setFaults("/paid.pdf", Faults(unavailableResponses: 1, retryAfter: "0"))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    var headers = Self.headers
                    headers["User-Agent"] = "PaperReader/2"
                    let request = AssetRequest(url: try API.url(server, "/paid.pdf"), headers: headers)
                    try await library.addIssue(named: "A", date: API.date, assets: [request])
                    let summary = try await library.download()
                    #expect(summary.finished.count == 1)
                    let requests = server.requests("/paid.pdf")
                    #expect(requests.count == 2)
                    for request in requests {
                        #expect(request.header("Authorization") == Self.token)
                        #expect(request.header("Cookie") == "session=abc123")
                        #expect(request.header("X-Edition") == "morning")
                        #expect(request.header("User-Agent") == "PaperReader/2")
                    }
                }
            }
        }
    }

    @Test func credentialsStayWithTheOriginAcrossRedirects() async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                other.serve("/cdn/file.pdf", bytes: patternBytes(count: 5_000))
                origin.serve("/local/file.pdf", bytes: patternBytes(count: 5_000))
                origin.setFaults("/away.pdf", Faults(redirectTo: other.url("/cdn/file.pdf")))
                origin.setFaults("/here.pdf", Faults(redirectTo: "/local/file.pdf"))
                try await withTemporaryDirectory { root in
                    try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                        try await library.addIssue(
                            named: "A", date: API.date,
                            assets: [
                                AssetRequest(url: try API.url(origin, "/away.pdf"), headers: Self.headers),
                                AssetRequest(url: try API.url(origin, "/here.pdf"), headers: Self.headers),
                            ])
                        #expect(try await library.download().finished.count == 2)
                    }
                }
                let away = try #require(other.requests("/cdn/file.pdf").first)
                #expect(away.header("Authorization") == nil)
                #expect(away.header("Cookie") == nil)
                #expect(away.header("X-Edition") == "morning")
                let here = try #require(origin.requests("/local/file.pdf").first)
                #expect(here.header("Authorization") == Self.token)
                #expect(here.header("Cookie") == "session=abc123")
            }
        }
    }

    @Test(arguments: [
        ("Range", "bytes=0-"), ("Host", "evil.invalid"), ("Bad Name", "zz-value-zz"),
        ("X-Evil", "a\r\nInjected: yes"),
    ])
    func refusedWithoutQuotingTheValue(name: String, value: String) async throws {
        try await withTemporaryDirectory { root in
            try await Library.withLibrary(at: root) { library in
                let request = AssetRequest(url: try #require(URL(string: "https://example.com/a")), headers: [name: value])
                await #expect {
                    try await library.addIssue(named: "A", date: API.date, assets: [request])
                } throws: { error in
                    guard let error = error as? NewsstandError else { return false }
                    return error.code == .invalidHeader && !error.message.contains(value)
                }
                #expect(try await library.summaries().isEmpty, "nothing was added")
            }
        }
        #expect(throws: NewsstandError.self) { try AssetRequest.parseHeader("no colon here") }
        #expect(try AssetRequest.parseHeader("Authorization:  Bearer x ") == ("Authorization", "Bearer x"))
    }

    @Test func redactedInJSONAndLeftOutOfExportsUnlessAsked() async throws {
        try await withTemporaryDirectory { root in
            let url = try #require(URL(string: "https://example.com/paid.pdf"))
            try await Library.withLibrary(at: root.appendingPathComponent("one")) { library in
                try await library.addIssue(
                    named: "A", date: API.date, assets: [AssetRequest(url: url, headers: Self.headers)])
                let issue = try #require(try await library.issue(named: "A"))
                let asset = try #require(issue.assets.first)
                #expect(asset.headers == Self.headers, "the catalog keeps the values")
                #expect(asset.redactedHeaders["Authorization"] == "Bearer …(redacted)")
                #expect(asset.redactedHeaders["Cookie"] == "…(redacted)")

                let json = try ReportJSON.text(library.report(for: issue), compact: true)
                #expect(json.contains("\"Authorization\":\"Bearer …(redacted)\""))
                #expect(!json.contains("s3cr3t") && !json.contains("abc123") && !json.contains("morning"))

                let listed = root.appendingPathComponent("list.json")
                _ = FileManager.default.createFile(atPath: listed.path, contents: nil)
                try await library.writeJSONList(to: try FileHandle(forWritingTo: listed))
                let list = try String(contentsOf: listed, encoding: .utf8)
                #expect(list.contains("(redacted)") && !list.contains("s3cr3t"))

                let plain = root.appendingPathComponent("plain.json")
                _ = FileManager.default.createFile(atPath: plain.path, contents: nil)
                let report = try await library.exportIssues(to: try FileHandle(forWritingTo: plain))
                #expect(report.assetsWithHeadersLeftOut == 1)
                let exported = try String(contentsOf: plain, encoding: .utf8)
                #expect(!exported.contains("headers") && !exported.contains("s3cr3t"))

                let full = root.appendingPathComponent("full.json")
                _ = FileManager.default.createFile(atPath: full.path, contents: nil)
                let fullReport = try await library.exportIssues(
                    to: try FileHandle(forWritingTo: full), includeHeaders: true)
                #expect(fullReport.assetsWithHeadersLeftOut == 0)
            }
            // An export with headers imports into another library as the same asset.
            try await Library.withLibrary(at: root.appendingPathComponent("two")) { library in
                let data = try Data(contentsOf: root.appendingPathComponent("full.json"))
                let report = try await library.importIssues(from: data, source: "full.json")
                #expect(report.added == ["A"])
                #expect(try await library.issue(named: "A")?.assets.first?.headers == Self.headers)
            }
        }
    }
}
