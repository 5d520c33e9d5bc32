import Foundation
import NIOHTTP1
import Newsstand
import NewsstandTestSupport
import Testing

/// `issues serve` over issues filed by a layout template: each issue serves and lists its own files from the
/// folder it shares, never a neighbour's.
@Suite(.timeLimit(.minutes(3)))
struct FiledIssueServingTests {
    @Test func aFiledIssueServesOnlyItsOwnFiles() async throws {
        try await withTestServer { origin in
            origin.serve("/one", bytes: patternBytes(count: 700), contentType: "audio/mpeg")
            origin.serve("/two", bytes: patternBytes(count: 900), contentType: "audio/mpeg")
            try await withServer(prepare: { library in
                let template = try LayoutTemplate("{publication}/{name}.{ext}")
                for (name, path) in [("One", "/one"), ("Two", "/two")] {
                    let url = try #require(URL(string: origin.url(path)))
                    try await library.addIssue(
                        named: name, date: IssueDate(year: 2026, month: 11, day: 20) ?? IssueDate(Date()),
                        assets: [AssetRequest(url: url)], publication: "Cast", template: template)
                }
                _ = try await library.download()
            }) { served in
                let one = try await served.library.key(of: "One", served: served)
                let own = try await served.request(.GET, "/files/\(one)/One.mp3")
                #expect(own.status == 200 && own.bytes.count == 700)
                #expect(own.headers.first(name: "content-type") == "audio/mpeg")
                let neighbour = try await served.request(.GET, "/files/\(one)/Two.mp3")
                #expect(neighbour.status == 404)
                let page = try await served.request(.GET, "/issues/\(one)")
                #expect(page.body.contains("One.mp3") && !page.body.contains("Two.mp3"))
            }
        }
    }
}
