import Foundation
import Newsstand
import NewsstandTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct NewsstandErrorTests {
    @Test func localizedDescriptionIsTheOneLineMessage() {
        let error: any Error = NewsstandError(.issueNotFound, "no issue named \"X\" in /lib")
        #expect(error.localizedDescription == "no issue named \"X\" in /lib")
        #expect("\(error)" == "no issue named \"X\" in /lib")
    }

    @Test func codesCompareAndHash() {
        let a = NewsstandError(.httpStatus, "a")
        let b = NewsstandError(.httpStatus, "b")
        #expect(a.code == b.code)
        #expect(a.code != NewsstandError.Code.network)
        #expect(Set([a.code, b.code, .network]).count == 2)
    }

    @Test func aFailedDownloadCarriesTheHTTPStatus() async throws {
        try await withTestServer { server in
            server.setFaults("/gone.pdf", Faults(status: 410))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/gone.pdf"))])
                    var failure: NewsstandError?
                    let summary = try await library.download { events in
                        for await event in events {
                            if case .failed(let error) = event.kind { failure = error }
                        }
                    }
                    let error = try #require(failure)
                    #expect(error.code == .httpStatus)
                    #expect(error.httpStatus == 410)
                    #expect(error.errno == nil)
                    #expect(error.localizedDescription == "\(server.url("/gone.pdf")) answered 410 Gone")
                    #expect(summary.failed.values.first == error.message)
                }
            }
        }
    }

    @Test func aTransientStatusThatNeverHealsKeepsItsStatus() async throws {
        try await withTestServer { server in
            server.setFaults("/busy.pdf", Faults(status: 503))
            try await withTemporaryDirectory { root in
                try await Library.withLibrary(at: root, configuration: API.configuration()) { library in
                    try await library.addIssue(
                        named: "A", date: API.date, assets: [AssetRequest(url: try API.url(server, "/busy.pdf"))])
                    var failure: NewsstandError?
                    try await library.download { events in
                        for await event in events {
                            if case .failed(let error) = event.kind { failure = error }
                        }
                    }
                    #expect(failure?.httpStatus == 503)
                    #expect(failure?.message.contains("gave up after") == true)
                }
            }
        }
    }

    @Test func aSystemCallFailureCarriesTheErrno() async throws {
        try await withTemporaryDirectory { root in
            try await Library.withLibrary(at: root) { library in
                let issue = try await library.addIssue(named: "A", date: API.date)
                // A regular file where the issue's content folder goes.
                try Data("x".utf8).write(to: library.contentURL(for: issue))
                await #expect {
                    try await library.contentURL(forIssueNamed: "A")
                } throws: { error in
                    guard let error = error as? NewsstandError else { return false }
                    return error.code == .io && error.errno == EEXIST && error.localizedDescription == error.message
                }
            }
        }
    }
}
