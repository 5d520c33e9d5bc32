import Foundation
import NewsstandTestSupport
import Testing

/// A refused certificate says why, with the advice for that reason: an expired (or not yet valid) one points
/// at the site and the clock, never at trusting a CA; a self-signed one and one from an unknown CA at
/// `--cacert`; one for another name gives both names. Each against a real HTTPS server on 127.0.0.1 whose
/// certificate the test made.
@Suite(.timeLimit(.minutes(5))) struct CertificateErrorCLITests {
    /// Serves one asset over TLS with `certificate` and downloads it into a fresh library; the download's result.
    func download(
        _ certificate: TestCertificateAuthority.ServerCertificate, in folder: URL, _ extra: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> CommandResult {
        try await withTestServer(tls: try certificate.serverTLSConfiguration()) { server in
            server.serve("/secure.bin", bytes: patternBytes(count: 4_000, seed: 15))
            let library = folder.appendingPathComponent("library-\(UUID().uuidString)")
            let add = try CommandRunner.issues(
                ["add", "Secure", "--date", "2026-11-20", "--asset", server.url("/secure.bin")], library: library)
            #expect(add.status == 0, "\(add.stderr)")
            let r = try CommandRunner.issues(
                ["download"] + extra, library: library, environment: environment)
            #expect(r.status == 1, "\(r.stderr)")
            #expect(server.requestCount("/secure.bin") == 0)
            return r
        }
    }

    @Test func expiredCertificateSaysWhenAndPointsAtTheSiteAndTheClock() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            let expired = try ca.signServerCertificate(
                named: "expired", notBefore: Date(timeIntervalSince1970: 1_735_689_600),  // 2025-01-01
                notAfter: Date(timeIntervalSince1970: 1_735_776_000))  // 2025-01-02
            let r = try await download(
                expired, in: folder, ["--cacert", ca.certificatePath])
            #expect(r.stderr.contains("certificate problem"), "\(r.stderr)")
            #expect(r.stderr.contains("the certificate of 127.0.0.1 expired on 2025-01-02 00:00 UTC"), "\(r.stderr)")
            #expect(r.stderr.contains("clock"), "\(r.stderr)")
            #expect(!r.stderr.contains("--cacert"), "\(r.stderr)")
            #expect(!r.stderr.contains("trust"), "\(r.stderr)")
        }
    }

    @Test func notYetValidCertificateSaysFromWhen() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            let future = try ca.signServerCertificate(
                named: "future", notBefore: Date(timeIntervalSince1970: 4_070_908_800),  // 2099-01-01
                notAfter: Date(timeIntervalSince1970: 4_070_995_200))
            let r = try await download(
                future, in: folder, ["--cacert", ca.certificatePath])
            #expect(r.stderr.contains("is not valid until 2099-01-01 00:00 UTC"), "\(r.stderr)")
            #expect(r.stderr.contains("clock"), "\(r.stderr)")
            #expect(!r.stderr.contains("--cacert"), "\(r.stderr)")
        }
    }

    @Test func selfSignedCertificateSaysSoAndPointsAtCacert() async throws {
        try await withTemporaryDirectory { folder in
            let selfSigned = try TestCertificateAuthority.makeSelfSigned(in: folder.appendingPathComponent("self"))
            let r = try await download(selfSigned, in: folder)
            #expect(
                r.stderr.contains("127.0.0.1 presented a self-signed certificate (\"self-signed test server\")"),
                "\(r.stderr)")
            #expect(r.stderr.contains("--cacert"), "\(r.stderr)")
            #expect(!r.stderr.contains("expired"), "\(r.stderr)")
        }
    }

    /// Trusted, but issued for another name than the one asked for: both names are given.
    @Test func wrongNameGivesTheCertificatesNamesAndTheHost() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            let other = try ca.signServerCertificate(
                named: "other", names: ["DNS:files.example.org", "DNS:www.example.org"])
            let r = try await download(
                other, in: folder, ["--cacert", ca.certificatePath])
            #expect(
                r.stderr.contains(
                    "the certificate of 127.0.0.1 is for files.example.org, www.example.org, not 127.0.0.1"),
                "\(r.stderr)")
            #expect(!r.stderr.contains("--cacert"), "\(r.stderr)")
        }
    }

    /// Signed by a CA that is not trusted: the CA is named, and the advice is to trust it.
    @Test func unknownCANamesTheIssuerAndPointsAtCacert() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"), name: "Private Test CA")
            let r = try await download(try ca.signServerCertificate(named: "server"), in: folder)
            #expect(
                r.stderr.contains(
                    "127.0.0.1 presented a certificate signed by \"Private Test CA\", a CA this machine does not trust"),
                "\(r.stderr)")
            #expect(r.stderr.contains("--cacert"), "\(r.stderr)")
            #expect(!r.stderr.contains("self-signed"), "\(r.stderr)")
        }
    }

    /// A CA file that is not there is named as missing, not as something that is not a certificate.
    @Test func missingCAFileIsNamedAsMissing() async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            let r = try await download(
                try ca.signServerCertificate(named: "server"), in: folder,
                environment: ["SSL_CERT_FILE": "/nonexistent/bundle.pem"])
            #expect(r.stderr.contains("/nonexistent/bundle.pem (SSL_CERT_FILE): no such file"), "\(r.stderr)")
            #expect(!r.stderr.contains("PEM"), "\(r.stderr)")
            let flag = try CommandRunner.issues(
                ["download", "--cacert", "/nonexistent/ca.pem"], library: folder.appendingPathComponent("empty"))
            #expect(flag.status == 64, "\(flag.stderr)")
            #expect(flag.stderr.contains("--cacert /nonexistent/ca.pem: no such file"), "\(flag.stderr)")
        }
    }
}
