import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why a server's certificate was refused, in words that lead to the right fix.
///
/// BoringSSL reports every refused chain as `CERTIFICATE_VERIFY_FAILED`, and AsyncHTTPClient cannot hand over
/// the certificate it refused; but "expired", "self-signed" and "signed by a CA you do not trust" need
/// different advice. So after such a failure one more handshake fetches the chain the server presents
/// (accepting nothing, sending no request), and its dates, issuer and names say which it was.
enum CertificateDiagnosis {
    enum Problem: Sendable, Equatable {
        case expired(on: Date)
        case notYetValid(until: Date)
        case selfSigned(subject: String)
        case unknownIssuer(issuer: String)
        /// The certificate is trusted, but for other names than the host asked for.
        case wrongName(certificateNames: [String])
    }

    /// What is wrong with `chain` (leaf first) as presented by `host`, or nil when it is empty.
    /// - Parameter hostnameRefused: NIOSSL accepted the chain and refused only the name.
    static func problem(chain: [NIOSSLCertificate], hostnameRefused: Bool, now: Date) -> Problem? {
        guard let leaf = chain.first else { return nil }
        if hostnameRefused { return .wrongName(certificateNames: names(of: leaf)) }
        // Dates first: an expired certificate from a trusted CA fails the same way as an unknown CA.
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        if notAfter < now { return .expired(on: notAfter) }
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        if notBefore > now { return .notYetValid(until: notBefore) }
        if leaf.subjectName == leaf.issuerName { return .selfSigned(subject: describe(leaf.subjectName)) }
        return .unknownIssuer(issuer: describe(leaf.issuerName))
    }

    /// The message for `problem`, after "certificate problem: ".
    static func message(_ problem: Problem, host: String, now: Date) -> String {
        switch problem {
        case .expired(let date):
            return "the certificate of \(host) expired on \(format(date)); the site must renew it (tell its owner), "
                + "or, if this machine's clock is wrong (it reads \(format(now))), set the clock right"
        case .notYetValid(let date):
            return "the certificate of \(host) is not valid until \(format(date)); this machine's clock reads "
                + "\(format(now)): if that is wrong, set the clock right, else tell the site's owner"
        case .selfSigned(let subject):
            return "\(host) presented a self-signed certificate (\(subject)) that is not trusted; if you trust it, "
                + "give that certificate with --cacert FILE, the config file's cacert or SSL_CERT_FILE"
        case .unknownIssuer(let issuer):
            return "\(host) presented a certificate signed by \(issuer), a CA this machine does not trust; "
                + "trust that CA with --cacert FILE, the config file's cacert, SSL_CERT_FILE or SSL_CERT_DIR"
        case .wrongName(let names):
            let listed = names.isEmpty ? "no name" : names.joined(separator: ", ")
            return "the certificate of \(host) is for \(listed), not \(host); use a URL with a name the "
                + "certificate is for, or tell the site's owner"
        }
    }

    /// The chain `host:port` presents, fetched by a handshake that refuses it; empty when none arrives
    /// within a few seconds (the server went away, or it is not TLS after all).
    static func presentedChain(host: String, port: Int) async -> [NIOSSLCertificate] {
        let presented = Presented()
        do {
            let context = try NIOSSLContext(configuration: .makeClientConfiguration())
            // SNI takes names only; an IP literal is sent without it.
            let serverName = IPAddressBytes(host) == nil ? host : nil
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(5))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context, serverHostname: serverName,
                            customVerificationCallback: { certificates, verdict in
                                presented.chain.withLock { $0 = certificates }
                                verdict.succeed(.failed)
                            })
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: host, port: port).get()
            // The refusal closes the channel; a server that never answers the handshake is closed here.
            let deadline = channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
            try? await channel.closeFuture.get()
            deadline.cancel()
        } catch {
            // No chain: the caller keeps the message it had.
        }
        return presented.chain.withLock { $0 }
    }

    private final class Presented: Sendable {
        let chain = Mutex<[NIOSSLCertificate]>([])
    }

    /// The DNS names and IP addresses of the certificate's subjectAltName, else its common name.
    static func names(of certificate: NIOSSLCertificate) -> [String] {
        var names: [String] = []
        for name in certificate._subjectAlternativeNames() {
            let bytes = Array(name.contents)
            switch name.nameType {
            case .dnsName: names.append(String(decoding: bytes, as: UTF8.self))
            case .ipAddress: if let text = ipText(bytes) { names.append(text) }
            default: break
            }
        }
        if names.isEmpty {
            names = certificate.subjectName.filter { $0.type == .commonName }.map(\.value)
        }
        return names
    }

    /// `"CN"`, quoted, as people know a certificate; the whole name when it has no common name.
    private static func describe(_ name: [SSLCertificateName]) -> String {
        if let common = name.first(where: { $0.type == .commonName }) { return "\"\(common.value)\"" }
        return "\"" + name.map(\.value).joined(separator: ", ") + "\""
    }

    private static func ipText(_ bytes: [UInt8]) -> String? {
        let family = bytes.count == 4 ? AF_INET : bytes.count == 16 ? AF_INET6 : nil
        guard let family else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { address in
            inet_ntop(family, address.baseAddress, &text, socklen_t(text.count))
        }
        guard written != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }
}
