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

    @Test(arguments: [
        ("GET https://h/a.mp3?token=abc&x=1", "GET https://h/a.mp3?token=***&x=1"),
        ("https://h/f?API_KEY=k#frag", "https://h/f?API_KEY=***#frag"),
        ("s3 https://b.s3/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=deadbeef done",
         "s3 https://b.s3/o?X-Amz-Credential=***&X-Amz-Signature=*** done"),
        ("webhook http://h/hook?sig=1&access_token=2&id=3", "webhook http://h/hook?sig=***&access_token=***&id=3"),
        ("\"url\":\"https://u:p@h/x?apikey=z\"", "\"url\":\"https://u:***@h/x?apikey=***\""),
        ("https://h/?monkey=1&keys=2&tokens=3", "https://h/?monkey=1&keys=2&tokens=3"),
        ("a=b and c&d=e", "a=b and c&d=e"),
        ("https://h/x?token=", "https://h/x?token="),
        ("no query at all", "no query at all"),
    ])
    func redactSecretsMasksTokenLikeQueryValues(text: String, expected: String) {
        #expect(URLCredentials.redactSecrets(text) == expected)
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
