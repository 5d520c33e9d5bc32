import Foundation
import NewsstandCore
import Testing

/// Passwords in URLs: masked in any text, split off before storing, keyed by origin.
@Suite(.timeLimit(.minutes(1))) struct URLCredentialsTests {
    @Test(arguments: [
        ("error: https://u:p4ss@host/feed answered 404", "error: https://u:***@host/feed answered 404"),
        ("GET http://u@host:8080/a?b=c@d", "GET http://u:***@host:8080/a?b=c@d"),
        ("two: http://a:b@x/ and https://c:d@y", "two: http://a:***@x/ and https://c:***@y"),
        ("no user: https://host/a@b", "no user: https://host/a@b"),
        ("\"url\":\"https://u:p@h/x\"", "\"url\":\"https://u:***@h/x\""),
        ("mail me@example.com", "mail me@example.com"),
    ])
    func redactMasksEveryPassword(text: String, expected: String) {
        #expect(URLCredentials.redact(text) == expected)
    }

    @Test func splitKeepsTheUserAndKeysByOrigin() throws {
        let url = try #require(URL(string: "https://reader:s%40cret@Example.com/feed.xml"))
        let (stripped, credential) = URLCredentials.split(url)
        #expect(stripped.absoluteString == "https://reader@Example.com/feed.xml")
        #expect(credential == Credential(user: "reader", password: "s@cret"))
        #expect(URLCredentials.origin(of: url) == "https://example.com:443")
        #expect(URLCredentials.withoutUserInfo(url).absoluteString == "https://Example.com/feed.xml")
        #expect(credential?.basicAuthorization == "Basic " + Data("reader:s@cret".utf8).base64EncodedString())
    }
}
