import Foundation
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The one HTTP-date reader, shared by `Retry-After` and the test server.
@Suite(.timeLimit(.minutes(5))) struct HTTPDateTests {
    @Test(arguments: [Int64(0), 784_111_777, 1_700_000_000, 253_402_300_799, -86_400])
    func formatAndParseRoundTrip(_ seconds: Int64) {
        #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
    }

    @Test func readsTheRFCExample() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse(" Sun, 06 Nov 1994 08:49:37 GMT ") == 784_111_777)
    }

    /// The obsolete RFC 850 and asctime forms, other zones, and malformed fields are refused.
    @Test(arguments: [
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 EST",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "",
    ])
    func refusesOtherForms(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func retryAfterReadsAFutureDate() throws {
        let inAMinute = Int64(Date().timeIntervalSince1970) + 60
        let delay = try #require(RetryAfter.parse(HTTPDate.format(inAMinute)))
        #expect(delay > .seconds(50) && delay <= .seconds(60))
    }
}
