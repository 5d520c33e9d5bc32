import Foundation
import NewsstandTestSupport
import Testing

/// `issues download` against a real HTTPS server whose certificate a CA made in the test signed:
/// `--cacert`, `SSL_CERT_FILE` and `SSL_CERT_DIR` add that CA; without it the download fails at once.
@Suite(.timeLimit(.minutes(5))) struct TLSCLITests {
    /// A CA, an HTTPS server presenting its certificate, and a library with one asset on that server.
    struct Setup {
        var ca: TestCertificateAuthority
        var server: TestHTTPServer
        var library: URL
        var body: [UInt8]
        var folder: URL

        func download(_ extra: [String] = [], environment: [String: String] = [:]) throws -> CommandResult {
            try CommandRunner.issues(["download"] + extra, library: library, environment: environment)
        }

        var downloaded: Data? { try? Data(contentsOf: library.appendingPathComponent("Secure/secure.bin")) }
    }

    func withSetup(_ body: (Setup) async throws -> Void) async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            try await withTestServer(tls: try ca.serverTLSConfiguration()) { server in
                let bytes = patternBytes(count: 20_000, seed: 14)
                server.serve("/secure.bin", bytes: bytes)
                let library = folder.appendingPathComponent("library")
                let add = try CommandRunner.issues(
                    ["add", "Secure", "--date", "2026-11-20", "--asset", server.url("/secure.bin")], library: library)
                #expect(add.status == 0, "\(add.stderr)")
                try await body(Setup(ca: ca, server: server, library: library, body: bytes, folder: folder))
            }
        }
    }

    @Test func cacertTrustsAPrivateCA() async throws {
        try await withSetup { setup in
            let r = try setup.download(["--cacert", setup.ca.certificatePath])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(setup.downloaded == Data(setup.body))
        }
    }

    @Test func sslCertFileTrustsAPrivateCA() async throws {
        try await withSetup { setup in
            let r = try setup.download(environment: ["SSL_CERT_FILE": setup.ca.certificatePath])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(setup.downloaded == Data(setup.body))
        }
    }

    /// A folder as `openssl rehash` leaves it (`HASH.0`), or with the PEM under any name; folders
    /// that do not exist in the `:`-separated list are skipped, as OpenSSL does.
    @Test(arguments: [true, false]) func sslCertDirTrustsAPrivateCA(hashedName: Bool) async throws {
        try await withSetup { setup in
            let dir = setup.folder.appendingPathComponent("certs")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let name = hashedName ? try setup.ca.subjectHash() + ".0" : "my private CA.pem"
            try FileManager.default.createSymbolicLink(
                atPath: dir.appendingPathComponent(name).path, withDestinationPath: setup.ca.certificatePath)
            // Not a certificate: skipped, as OpenSSL skips what it cannot parse.
            try Data("not a certificate\n".utf8).write(to: dir.appendingPathComponent("README"))
            let r = try setup.download(environment: ["SSL_CERT_DIR": "/nonexistent-issues-certs:" + dir.path])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(setup.downloaded == Data(setup.body))
        }
    }

    /// Without the CA the handshake fails; that is permanent (not retried six times with backoff), and
    /// the message says it is the certificate and names the host.
    @Test func untrustedCertificateFailsAtOnceAndSaysSo() async throws {
        try await withSetup { setup in
            // Another CA given does not make the server's certificate trusted.
            let other = try TestCertificateAuthority.make(
                in: setup.folder.appendingPathComponent("other"), name: "another CA")
            let started = ContinuousClock.now
            let r = try setup.download(["--cacert", other.certificatePath])
            let elapsed = ContinuousClock.now - started
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("certificate problem"), "\(r.stderr)")
            #expect(r.stderr.contains("127.0.0.1"), "\(r.stderr)")
            #expect(!r.stderr.contains("gave up after"), "\(r.stderr)")
            #expect(!r.stderr.contains("retrying"), "\(r.stderr)")
            #expect(elapsed < .seconds(10), "\(elapsed)")
            #expect(setup.server.requestCount("/secure.bin") == 0)
            #expect(setup.downloaded == nil)
        }
    }

    @Test func missingCacertFileIsAUsageError() async throws {
        try await withTemporaryDirectory { library in
            let r = try CommandRunner.issues(["download", "--cacert", "/nonexistent/ca.pem"], library: library)
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderr.contains("/nonexistent/ca.pem"), "\(r.stderr)")
        }
    }

    /// An unreadable `SSL_CERT_FILE` fails the download naming the variable and file, rather than
    /// quietly trusting less than the user asked for.
    @Test func unreadableSSLCertFileIsNamed() async throws {
        try await withSetup { setup in
            let r = try setup.download(environment: ["SSL_CERT_FILE": "/nonexistent/bundle.pem"])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("SSL_CERT_FILE"), "\(r.stderr)")
            #expect(r.stderr.contains("/nonexistent/bundle.pem"), "\(r.stderr)")
        }
    }
}
