import Foundation
import NIOSSL

/// Certificates a client must refuse, each for its own reason: expired, not yet valid, for another name
/// (signed by the test CA), and self-signed.
extension TestCertificateAuthority {
    /// A server certificate and its key, as PEM files.
    public struct ServerCertificate: Sendable {
        public let certificatePath: String
        public let keyPath: String

        /// A server TLS configuration presenting this certificate.
        public func serverTLSConfiguration() throws -> TLSConfiguration {
            TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificatePath).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: keyPath, format: .pem)))
        }
    }

    /// A server certificate this CA signs, named `file` in the CA's folder, for `names` (`DNS:…`, `IP:…`) and
    /// valid from `notBefore` to `notAfter` (by default from an hour ago for two days). `openssl ca` signs it:
    /// `x509 -req` takes no dates, and an expired certificate needs a validity that ended in the past.
    public func signServerCertificate(
        named file: String, names: [String] = ["DNS:localhost", "IP:127.0.0.1"],
        notBefore: Date = Date(timeIntervalSinceNow: -3600), notAfter: Date = Date(timeIntervalSinceNow: 2 * 86400)
    ) throws -> ServerCertificate {
        let work = folder.appendingPathComponent("signing")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let configuration = work.appendingPathComponent("ca.cnf")
        try Data(
            """
            [ ca ]
            default_ca = test
            [ test ]
            database = \(work.path)/index.txt
            new_certs_dir = \(work.path)
            serial = \(work.path)/serial
            default_md = sha256
            policy = any
            unique_subject = no
            [ any ]
            commonName = supplied

            """.utf8
        ).write(to: configuration)
        let index = work.appendingPathComponent("index.txt")
        if !FileManager.default.fileExists(atPath: index.path) { try Data().write(to: index) }
        let extensions = work.appendingPathComponent("\(file).ext")
        try Data(
            """
            subjectAltName=\(names.joined(separator: ","))
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.utf8
        ).write(to: extensions)
        let certificate = ServerCertificate(
            certificatePath: folder.appendingPathComponent("\(file).pem").path,
            keyPath: folder.appendingPathComponent("\(file).key").path)
        let request = work.appendingPathComponent("\(file).csr").path
        try Self.openssl(
            ["req", "-new"] + Self.curve + [
                "-keyout", certificate.keyPath, "-out", request, "-subj", "/CN=\(file)",
            ])
        try Self.openssl([
            "ca", "-batch", "-notext", "-rand_serial", "-config", configuration.path,
            "-cert", certificatePath, "-keyfile", folder.appendingPathComponent("ca.key").path,
            "-in", request, "-out", certificate.certificatePath, "-extfile", extensions.path,
            "-startdate", Self.asn1Time(notBefore), "-enddate", Self.asn1Time(notAfter),
        ])
        return certificate
    }

    /// A self-signed server certificate (not a CA) for localhost and 127.0.0.1, in `folder`.
    public static func makeSelfSigned(in folder: URL, name: String = "self-signed test server") throws
        -> ServerCertificate
    {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = ServerCertificate(
            certificatePath: folder.appendingPathComponent("self-signed.pem").path,
            keyPath: folder.appendingPathComponent("self-signed.key").path)
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", certificate.keyPath, "-out", certificate.certificatePath, "-days", "2",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-addext", "basicConstraints=critical,CA:FALSE",
            ])
        return certificate
    }

    static let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    /// `YYYYMMDDHHMMSSZ`, in UTC, as `openssl ca -startdate` takes it.
    private static func asn1Time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }
}
