import Foundation
import NIOSSL
import NewsstandCore

/// Certificates trusted in addition to the system's trust store: the configuration's CA files and,
/// as OpenSSL tools read them, `SSL_CERT_FILE` (a PEM bundle) and `SSL_CERT_DIR` (folders, `:`-separated,
/// of PEM files, hashed names or not).
///
/// They are added to the system store, never replace it, so pointing `SSL_CERT_FILE` at a private CA
/// does not break every public site.
enum TrustRoots {
    /// Reads every extra root. Blocking file I/O: call it through `runBlocking`.
    /// - Throws: `NewsstandError` (`.io`) naming the file and where it came from when a CA file given
    ///   explicitly (configuration or `SSL_CERT_FILE`) cannot be read or holds no certificate.
    static func load(files: [URL], environment: [String: String]) throws -> [NIOSSLCertificate] {
        var sources = files.map { (path: $0.path, origin: "CA file") }
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty {
            sources.append((file, "SSL_CERT_FILE"))
        }
        var certificates: [NIOSSLCertificate] = []
        for source in sources {
            // BoringSSL reports a file it cannot open as one it cannot parse; say which it was.
            guard FileManager.default.fileExists(atPath: source.path) else {
                throw NewsstandError(
                    .io, "cannot read CA certificates from \(source.path) (\(source.origin)): no such file")
            }
            guard FileManager.default.isReadableFile(atPath: source.path) else {
                throw NewsstandError(
                    .io, "cannot read CA certificates from \(source.path) (\(source.origin)): permission denied")
            }
            let loaded: [NIOSSLCertificate]
            do {
                loaded = try NIOSSLCertificate.fromPEMFile(source.path)
            } catch {
                throw NewsstandError(
                    .io, "cannot read CA certificates from \(source.path) (\(source.origin)): \(reason(error))",
                    underlying: error)
            }
            guard !loaded.isEmpty else {
                throw NewsstandError(
                    .io, "\(source.path) (\(source.origin)) holds no PEM certificate")
            }
            certificates += loaded
        }
        // OpenSSL skips folders that do not exist and files that are not certificates (CRLs share
        // hashed folders); so do we, since SSL_CERT_DIR often lists more than one machine's layout.
        for folder in (environment["SSL_CERT_DIR"] ?? "").split(separator: ":") where !folder.isEmpty {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: String(folder))) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let path = String(folder) + "/" + name
                if let loaded = try? NIOSSLCertificate.fromPEMFile(path) { certificates += loaded }
            }
        }
        // Hashed folders hold the same certificate under several names.
        var seen = Set<NIOSSLCertificate>()
        return certificates.filter { seen.insert($0).inserted }
    }

    /// The client TLS configuration: the system's roots plus `extra`.
    static func configuration(adding extra: [NIOSSLCertificate]) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .default
        if !extra.isEmpty { tls.additionalTrustRoots = [.certificates(extra)] }
        return tls
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? NIOSSLError, error == .noSuchFilesystemObject { return "no such file" }
        if let error = error as? NIOSSLError, error == .failedToLoadCertificate { return "not a PEM certificate" }
        return String(describing: error)
    }
}
