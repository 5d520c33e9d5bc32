import Foundation
import NIOSSL

/// A private CA made for one test with the `openssl` command, and a server certificate it signed
/// (EC P-256, valid for two days) for `localhost`, `127.0.0.1` and any extra names.
///
/// The files stay in `folder`, so a test can hand them to the code under test as `--cacert`,
/// `SSL_CERT_FILE` or an `SSL_CERT_DIR`.
public struct TestCertificateAuthority: Sendable {
    public let folder: URL
    /// The CA certificate (PEM): what a client must trust.
    public var certificatePath: String { folder.appendingPathComponent("ca.pem").path }
    /// The server's certificate (PEM), signed by the CA.
    public var serverCertificatePath: String { folder.appendingPathComponent("server.pem").path }
    /// The server's private key (PEM).
    public var serverKeyPath: String { folder.appendingPathComponent("server.key").path }

    /// Makes the CA and the server certificate in `folder` (created if missing).
    /// - Throws: when `openssl` is missing (`make test-deps` installs it) or fails.
    public static func make(
        in folder: URL, name: String = "issues test CA", serverNames: [String] = []
    ) throws -> TestCertificateAuthority {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ca = TestCertificateAuthority(folder: folder)
        let names = (["DNS:localhost", "IP:127.0.0.1"] + serverNames.map { "DNS:" + $0 }).joined(separator: ",")
        let extensions = folder.appendingPathComponent("server.ext")
        try Data(
            """
            subjectAltName=\(names)
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.utf8
        ).write(to: extensions)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", folder.appendingPathComponent("ca.key").path, "-out", ca.certificatePath,
                "-days", "2", "-subj", "/CN=\(name)",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try openssl(
            ["req", "-new"] + curve + [
                "-keyout", ca.serverKeyPath, "-out", folder.appendingPathComponent("server.csr").path,
                "-subj", "/CN=localhost",
            ])
        try openssl([
            "x509", "-req", "-in", folder.appendingPathComponent("server.csr").path,
            "-CA", ca.certificatePath, "-CAkey", folder.appendingPathComponent("ca.key").path,
            "-CAcreateserial", "-out", ca.serverCertificatePath, "-days", "2", "-extfile", extensions.path,
        ])
        return ca
    }

    /// The OpenSSL subject hash of the CA certificate: its file name in a hashed `SSL_CERT_DIR`
    /// (`HASH.0`), as `openssl rehash` names it.
    public func subjectHash() throws -> String {
        let result = try Self.openssl(["x509", "-hash", "-noout", "-in", certificatePath])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A server TLS configuration presenting the signed certificate.
    public func serverTLSConfiguration() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(serverCertificatePath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: serverKeyPath, format: .pem)))
    }

    @discardableResult
    static func openssl(_ arguments: [String]) throws -> CommandResult {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/openssl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else {
            throw TestCertificateError(description: "openssl is not installed; run `make test-deps`")
        }
        let result = try CommandRunner.run(path, arguments)
        guard result.status == 0 else {
            throw TestCertificateError(
                description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(result.stderr)")
        }
        return result
    }
}

/// `openssl` is missing or failed.
public struct TestCertificateError: Error, CustomStringConvertible {
    public var description: String
}
