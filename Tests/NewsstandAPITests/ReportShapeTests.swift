import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

/// Every machine-readable issue output is one shape, ``IssueReport``: the hand-written `list --json` stream
/// (kept for its speed) decodes to exactly the reports that `show --json` encodes.
@Suite(.timeLimit(.minutes(2))) struct ReportShapeTests {
    @Test func theListStreamDecodesToTheSameReportsAsEachIssue() async throws {
        try await withTestServer { server in
            server.serve("/a.pdf", bytes: patternBytes(count: 3_000))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    let secret = AssetRequest(
                        url: try API.url(server, "/paid.pdf"), headers: ["Authorization": "Bearer s3cr3t"])
                    try await library.addIssue(named: "Plain", date: API.date, assets: [AssetRequest(url: try API.url(server, "/a.pdf"))])
                    try await library.addIssue(named: "With headers", date: API.date, assets: [secret])
                    try await library.addIssue(named: "Empty \"quoted\" ✓", date: IssueDate(year: 2025, month: 1, day: 2)!)
                    // An app's own data that looks like a cover source's role is not one.
                    let lookalike = AssetRequest(url: try API.url(server, "/b.pdf"), userInfo: ["role": "cover"])
                    try await library.addIssue(named: "Look-alike", date: API.date, assets: [lookalike])
                    _ = try await library.download(issues: ["Plain"])
                    _ = try await library.pin(issuesNamed: ["Empty \"quoted\" ✓"])

                    let listed = root.appendingPathComponent("list.json")
                    _ = FileManager.default.createFile(atPath: listed.path, contents: nil)
                    try await library.writeJSONList(to: try FileHandle(forWritingTo: listed))
                    let stream = try JSONDecoder().decode([IssueReport].self, from: Data(contentsOf: listed))

                    var expected: [IssueReport] = []
                    for summary in try await library.summaries() {
                        let issue = try #require(try await library.issue(named: summary.name))
                        expected.append(library.report(for: issue))
                    }
                    #expect(stream.count == 4)
                    #expect(stream.first { $0.name == "Look-alike" }.map { $0.assets.count == 1 && $0.coverSource == nil } == true)
                    #expect(Set(stream) == Set(expected))
                    #expect(stream.allSatisfy { $0.reportVersion == IssueReport.reportVersion })
                    let plain = try #require(stream.first { $0.name == "Plain" })
                    #expect(plain.status == "available" && plain.assetsDone == 1 && plain.bytes == 3_000)
                    #expect(stream.first { $0.name == "With headers" }?.assets.first?.headers?["Authorization"] == "Bearer …(redacted)")

                    // The encoded report reads back as itself, and keeps the keys that are always written.
                    let text = try ReportJSON.text(plain)
                    #expect(try JSONDecoder().decode(IssueReport.self, from: Data(text.utf8)) == plain)
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                    let asset = try #require((object["assets"] as? [[String: Any]])?.first)
                    #expect(asset.keys.contains("error") && asset.keys.contains("expectedBytes"))
                    #expect(!text.contains("s3cr3t"))
                }
            }
        }
    }
}
