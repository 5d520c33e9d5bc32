import Foundation
import NewsstandTestSupport
import Testing

/// `issues download` through a real forward proxy (``TestForwardProxy``) that, like squid, allows
/// CONNECT to port 443 only. Assets name `issues-proxy-test.invalid`, which does not resolve, and the
/// proxy sends every connection to the test server: a download that works went through the proxy.
@Suite(.timeLimit(.minutes(5))) struct ProxyCLITests {
    static let host = "issues-proxy-test.invalid"

    func add(_ url: String, to library: URL, name: String = "Proxied") throws {
        let r = try CommandRunner.issues(["add", name, "--date", "2026-11-20", "--asset", url], library: library)
        #expect(r.status == 0, "\(r.stderr)")
    }

    func download(_ library: URL, _ environment: [String: String], retries: Int = 1) throws -> CommandResult {
        try CommandRunner.issues(["download", "--retries", "\(retries)"], library: library, environment: environment)
    }

    /// Plain http is sent to the proxy as `GET http://host/path`, never tunnelled (a CONNECT to port 80
    /// would be refused); a redirect and a resume after a cut connection go through the proxy too, the
    /// resume with `Range` and `If-Range`. Either case of the variable works, and `all_proxy` serves
    /// when the scheme has no variable of its own.
    @Test(arguments: ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"])
    func plainHTTPIsProxiedInAbsoluteForm(variable: String) async throws {
        try await withTestServer { server in
            let body = patternBytes(count: 300_000, seed: 7)
            server.serve("/data.bin", bytes: body)
            server.setFaults("/old.bin", Faults(redirectTo: "/data.bin"))
            server.setFaults("/data.bin", Faults(cutAfterBytes: 100_000))
            try await withTestProxy(.init(upstream: ("127.0.0.1", server.port))) { proxy in
                try await withTemporaryDirectory { lib in
                    try add("http://\(Self.host)/old.bin", to: lib)
                    let r = try download(lib, [variable: proxy.url()], retries: 2)
                    #expect(r.status == 0, "\(r.stderr)")
                    #expect(try Data(contentsOf: lib.appendingPathComponent("Proxied/old.bin")) == Data(body))
                    let targets = proxy.requests.map { "\($0.method) \($0.target)" }
                    // The retry starts again from the asset's own URL, as the redirect may have been temporary.
                    let hops = ["GET http://\(Self.host)/old.bin", "GET http://\(Self.host)/data.bin"]
                    #expect(targets == hops + hops, "\(targets)")
                    let resumed = try #require(server.requests("/data.bin").last)
                    let names = Set(resumed.headers.map { $0.0.lowercased() })
                    #expect(names.isSuperset(of: ["range", "if-range"]), "\(resumed.headers)")
                    #expect(!names.contains("proxy-authorization"))
                }
            }
        }
    }

    /// https goes through a CONNECT tunnel, with TLS to the server inside it; credentials from the
    /// proxy URL (percent-decoded) are sent on the CONNECT.
    @Test func httpsIsTunnelledWithConnectAndCredentials() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(
                in: folder.appendingPathComponent("ca"), serverNames: [Self.host])
            try await withTestServer(tls: try ca.serverTLSConfiguration()) { server in
                let body = patternBytes(count: 50_000, seed: 8)
                server.serve("/secure.bin", bytes: body)
                let options = TestForwardProxy.Options(
                    allowedConnectPorts: [server.port], credentials: ("alice", "p@ss:w rd"),
                    upstream: ("127.0.0.1", server.port))
                try await withTestProxy(options) { proxy in
                    let lib = folder.appendingPathComponent("library")
                    try add("https://\(Self.host):\(server.port)/secure.bin", to: lib)
                    let r = try CommandRunner.issues(
                        ["download", "--retries", "1", "--cacert", ca.certificatePath], library: lib,
                        environment: ["https_proxy": proxy.url(username: "alice", password: "p@ss:w rd")])
                    #expect(r.status == 0, "\(r.stderr)")
                    #expect(try Data(contentsOf: lib.appendingPathComponent("Proxied/secure.bin")) == Data(body))
                    let request = try #require(proxy.requests.first)
                    #expect(request.method == "CONNECT")
                    #expect(request.target == "\(Self.host):\(server.port)")
                    let expected = "Basic " + Data("alice:p@ss:w rd".utf8).base64EncodedString()
                    #expect(request.proxyAuthorization == expected)
                    #expect(request.status == 200)
                }
            }
        }
    }

    /// Plain-http credentials go in `Proxy-Authorization` on the proxied request itself.
    @Test func credentialsAreSentOnAbsoluteFormRequests() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: patternBytes(count: 1000))
            let options = TestForwardProxy.Options(credentials: ("bob", "s3cret"), upstream: ("127.0.0.1", server.port))
            try await withTestProxy(options) { proxy in
                try await withTemporaryDirectory { lib in
                    try add("http://\(Self.host)/a.bin", to: lib)
                    let r = try download(lib, ["http_proxy": proxy.url(username: "bob", password: "s3cret")])
                    #expect(r.status == 0, "\(r.stderr)")
                    #expect(
                        proxy.requests.map(\.proxyAuthorization)
                            == ["Basic " + Data("bob:s3cret".utf8).base64EncodedString()])
                }
            }
        }
    }

    /// A 407, to a proxied request or to a CONNECT, fails the asset at once (no retries: the same
    /// credentials would be refused again) with a message that names the proxy in words, not as
    /// AsyncHTTPClient's error case.
    @Test(arguments: ["http", "https"]) func proxyAuthenticationRequiredIsPermanentAndNamesTheProxy(scheme: String)
        async throws
    {
        let options = TestForwardProxy.Options(credentials: ("carol", "right"), upstream: ("127.0.0.1", 9))
        try await withTestProxy(options) { proxy in
            try await withTemporaryDirectory { lib in
                try add("\(scheme)://\(Self.host)/a.bin", to: lib)
                let variable = scheme == "https" ? "https_proxy" : "http_proxy"
                let missing = try download(lib, [variable: proxy.url()], retries: 6)
                #expect(missing.status == 1, "\(missing.stderr)")
                #expect(
                    missing.stderr.contains("the proxy 127.0.0.1:\(proxy.port) requires credentials"),
                    "\(missing.stderr)")
                #expect(missing.stderr.contains("407"), "\(missing.stderr)")
                #expect(!missing.stderr.contains("HTTPClientError"), "\(missing.stderr)")
                #expect(proxy.requests.count == 1, "retried: \(proxy.requests)")

                let wrong = try download(lib, [variable: proxy.url(username: "carol", password: "wrong")], retries: 6)
                #expect(wrong.status == 1, "\(wrong.stderr)")
                #expect(wrong.stderr.contains("refused the credentials of user \"carol\""), "\(wrong.stderr)")
                #expect(!wrong.stderr.contains("wrong"), "the password was printed: \(wrong.stderr)")
                #expect(proxy.requests.map(\.status) == [407, 407])
            }
        }
    }

    /// A proxy that refuses the tunnel (CONNECT to a port other than 443) is named as the one refusing.
    @Test func refusedTunnelNamesTheProxy() async throws {
        try await withTestProxy { proxy in
            try await withTemporaryDirectory { lib in
                try add("https://\(Self.host):8443/a.bin", to: lib)
                let r = try download(lib, ["https_proxy": proxy.url()])
                #expect(r.status == 1, "\(r.stderr)")
                #expect(r.stderr.contains("the proxy 127.0.0.1:\(proxy.port) refused to open a tunnel"), "\(r.stderr)")
                #expect(proxy.requests.map(\.status) == [403])
            }
        }
    }

    /// A proxy that is down is reported as the proxy, not as the server the asset is on.
    @Test(arguments: ["http", "https"]) func unreachableProxyIsNamedAsTheProxy(scheme: String) async throws {
        try await withTemporaryDirectory { lib in
            try add("\(scheme)://\(Self.host)/a.bin", to: lib)
            // Port 1 (tcpmux) has no listener on a test machine, and only root could start one.
            let r = try download(lib, ["all_proxy": "http://127.0.0.1:1"])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("cannot connect to the proxy 127.0.0.1:1"), "\(r.stderr)")
        }
    }

    /// `NO_PROXY=*` sends every host direct, past a proxy that does not exist (a host list is in
    /// `DownloadCLITests`).
    @Test func noProxyStarGoesDirect() async throws {
        try await withTestServer { server in
            server.serve("/direct.bin", bytes: patternBytes(count: 2000))
            try await withTemporaryDirectory { lib in
                try add(server.url("/direct.bin"), to: lib)
                let r = try download(lib, ["http_proxy": "http://127.0.0.1:1", "NO_PROXY": "*"])
                #expect(r.status == 0, "\(r.stderr)")
            }
        }
    }
}
