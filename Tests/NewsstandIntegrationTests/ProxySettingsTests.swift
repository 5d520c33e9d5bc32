import AsyncHTTPClient
import Foundation
import Logging
import NIOSSL
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// Proxy variables as curl reads them, the route each URL takes, and how proxy and TLS failures read.
@Suite(.timeLimit(.minutes(5))) struct ProxySettingsTests {
    func proxy(_ environment: [String: String], for url: String) throws -> ProxySettings.Proxy? {
        let choice = ProxySettings.fromEnvironment(environment).proxy(for: try #require(URL(string: url)))
        return try choice?.get()
    }

    @Test func eachSchemeHasItsVariableAndAllProxyIsTheFallback() throws {
        let env = ["http_proxy": "http://h:1", "all_proxy": "a:2"]
        #expect(try proxy(env, for: "http://x/f")?.host == "h")
        #expect(try proxy(env, for: "https://x/f") == .init(host: "a", port: 2))
        #expect(try proxy([:], for: "http://x/f") == nil)
    }

    /// Either case works; lower case wins when both are set, as in curl.
    @Test func eitherCaseLowerWins() throws {
        #expect(try proxy(["HTTPS_PROXY": "up:3"], for: "https://x/")?.host == "up")
        #expect(try proxy(["ALL_PROXY": "up:3"], for: "http://x/")?.host == "up")
        #expect(try proxy(["http_proxy": "low:1", "HTTP_PROXY": "up:2"], for: "http://x/")?.host == "low")
        #expect(try proxy(["http_proxy": "", "HTTP_PROXY": "up:2"], for: "http://x/")?.host == "up")
    }

    /// Credentials are percent-decoded; the port defaults to 1080 as in curl.
    @Test func credentialsAreDecodedAndSentAsBasic() throws {
        let found = try #require(try proxy(["http_proxy": "http://al%40ice:p%3Ass@proxy.example"], for: "http://x/"))
        #expect(found == .init(host: "proxy.example", port: 1080, username: "al@ice", password: "p:ss"))
        #expect(found.basicAuthorization == "Basic " + Data("al@ice:p:ss".utf8).base64EncodedString())
        #expect(found.displayName == "proxy.example:1080")
        #expect(try proxy(["http_proxy": "proxy:8080"], for: "http://x/")?.basicAuthorization == nil)
    }

    @Test func noProxyMatchesHostsAndDomains() throws {
        let env = ["all_proxy": "p:1", "no_proxy": "example.com, .internal,10.0.0.1"]
        #expect(try proxy(env, for: "http://example.com/") == nil)
        #expect(try proxy(env, for: "http://cdn.example.com/") == nil)
        #expect(try proxy(env, for: "https://a.internal/") == nil)
        #expect(try proxy(env, for: "http://10.0.0.1:8080/") == nil)
        #expect(try proxy(env, for: "http://notexample.com/") != nil)
        #expect(try proxy(["all_proxy": "p:1", "NO_PROXY": "*"], for: "http://any/") == nil)
    }

    /// CIDR entries, as curl reads them: an IP-literal host inside the range goes direct; one outside it, a
    /// host name, or an address of the other family still takes the proxy.
    @Test func noProxyCIDRMatchesAddressesInItsRange() throws {
        let env = ["all_proxy": "p:1", "no_proxy": "127.0.0.0/8, 192.168.1.0/24,::1/128,fd00::/8"]
        #expect(try proxy(env, for: "http://127.0.0.1:8080/") == nil)
        #expect(try proxy(env, for: "http://127.255.1.2/") == nil)
        #expect(try proxy(env, for: "http://192.168.1.77/") == nil)
        #expect(try proxy(env, for: "http://[::1]:8080/") == nil)
        #expect(try proxy(env, for: "https://[0:0::1]/") == nil)
        #expect(try proxy(env, for: "http://[fdab:1::2]/") == nil)
        #expect(try proxy(env, for: "http://128.0.0.1/") != nil)
        #expect(try proxy(env, for: "http://192.168.2.1/") != nil)
        #expect(try proxy(env, for: "http://[::2]/") != nil)
        #expect(try proxy(env, for: "http://[fe80::1]/") != nil)
        #expect(try proxy(env, for: "http://localhost/") != nil)
        #expect(try proxy(env, for: "http://[::ffff:127.0.0.1]/") != nil)
    }

    /// The matcher itself: prefix lengths at the edges, a bad prefix matches nothing, an address entry is
    /// compared as an address, and a name entry never matches an IP by its tail.
    @Test func noProxyEntryMatcher() {
        #expect(ProxySettings.noProxyEntry("0.0.0.0/0", matches: "203.0.113.9"))
        #expect(ProxySettings.noProxyEntry("10.1.2.3/32", matches: "10.1.2.3"))
        #expect(!ProxySettings.noProxyEntry("10.1.2.3/32", matches: "10.1.2.4"))
        #expect(ProxySettings.noProxyEntry("10.0.0.0/9", matches: "10.127.0.1"))
        #expect(!ProxySettings.noProxyEntry("10.0.0.0/9", matches: "10.128.0.1"))
        #expect(!ProxySettings.noProxyEntry("10.0.0.0/33", matches: "10.0.0.1"))
        #expect(!ProxySettings.noProxyEntry("10.0.0.0/x", matches: "10.0.0.1"))
        #expect(!ProxySettings.noProxyEntry("127.0.0.0/8", matches: "::1"))
        #expect(ProxySettings.noProxyEntry("[::1]", matches: "::1"))
        #expect(ProxySettings.noProxyEntry("::/0", matches: "2001:db8::1"))
        #expect(!ProxySettings.noProxyEntry("0.1", matches: "10.0.0.1"))
        #expect(!ProxySettings.noProxyEntry("127.0.0.0/8", matches: "localhost"))
        #expect(ProxySettings.noProxyEntry(".example.com", matches: "cdn.example.com"))
        #expect(ProxySettings.noProxyEntry("*", matches: "::1"))
    }

    /// A proxy this tool cannot use is an error naming the variable, never a silent direct connection,
    /// and never shows the password.
    @Test func unusableProxyIsAnErrorNamingTheVariable() throws {
        let settings = ProxySettings.fromEnvironment(["ALL_PROXY": "socks5://u:secret@h:1080"])
        let url = try #require(URL(string: "http://x/"))
        guard case .failure(let invalid) = settings.proxy(for: url) else {
            Issue.record("expected an error")
            return
        }
        #expect(invalid.variable == "ALL_PROXY")
        #expect(invalid.reason.contains("only http:// proxies"))
        #expect(!invalid.reason.contains("secret"))
    }

    @Test func routesTunnelHTTPSAndForwardPlainHTTP() throws {
        let proxy = ProxySettings.Proxy(host: "p", port: 3128)
        let engine = DownloadEngine(
            configuration: .init(), logger: .init(label: "test"), environment: ["all_proxy": "http://p:3128"])
        #expect(try engine.route(for: try #require(URL(string: "https://x/a"))) == .tunnel(proxy))
        #expect(try engine.route(for: try #require(URL(string: "http://x/a"))) == .forward(proxy))
        #expect(try engine.route(for: try #require(URL(string: "ftp://x/a"))) == .direct)
    }

    /// A 407 from either kind of proxy is permanent and worded for people, naming the proxy.
    @Test func proxyAuthenticationRequiredIsPermanent() throws {
        let url = try #require(URL(string: "https://x/a"))
        let proxy = ProxySettings.Proxy(host: "p", port: 3128, username: "u", password: "pw")
        for error in [HTTPClientError.proxyAuthenticationRequired as any Error, HTTPStatusFailure(status: 407)] {
            let classified = DownloadEngine.classify(
                error, url: url, hop: .init(url: url, route: .tunnel(proxy)))
            #expect(!classified.isTransient)
            #expect(classified.error.message.contains("the proxy p:3128 refused the credentials of user \"u\""))
            #expect(!classified.error.message.contains("HTTPClientError"))
        }
    }

    /// Extra roots are added to the system's, never replace them.
    @Test func extraTrustRootsAreAddedToTheSystemStore() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder)
            let roots = try TrustRoots.load(
                files: [URL(fileURLWithPath: ca.certificatePath)],
                environment: ["SSL_CERT_DIR": folder.path, "SSL_CERT_FILE": ca.certificatePath])
            // The same CA from three places, and the server certificate from the folder.
            #expect(roots.count == 2)
            let tls = TrustRoots.configuration(adding: roots)
            #expect(tls.trustRoots == .default)
            #expect(tls.additionalTrustRoots == [.certificates(roots)])
            #expect(TrustRoots.configuration(adding: []).additionalTrustRoots.isEmpty)
        }
    }

    @Test func unreadableCAFileIsNamed() throws {
        #expect {
            try TrustRoots.load(files: [URL(fileURLWithPath: "/nonexistent/ca.pem")], environment: [:])
        } throws: { error in
            "\(error)".contains("/nonexistent/ca.pem")
        }
    }
}
