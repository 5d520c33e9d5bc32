import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NewsstandCore

/// Sorting failures into retry-worthy or permanent, with messages that name the URL, host or proxy.
extension DownloadEngine {
    struct Classified {
        var error: NewsstandError
        var isTransient: Bool
        var retryAfter: Duration?
    }

    /// Sorts a failure into retry-worthy or permanent, with a message naming the URL (and the host or
    /// proxy at fault when it is not the asset's server). AsyncHTTPClient's errors are matched by value.
    static func classify(_ error: any Error, url: URL, hop: Hop? = nil) -> Classified {
        let target = url.absoluteString
        let host = hop?.url.host ?? url.host ?? target
        if let proxy = hop?.route.proxy, let classified = classifyProxyFailure(error, target: target, proxy: proxy) {
            return classified
        }
        switch error {
        case let error as NewsstandError:
            let transient = error.code == .lengthMismatch
            return Classified(error: error, isTransient: transient)
        case let status as HTTPStatusFailure:
            let text = HTTPResponseStatus(statusCode: status.status).reasonPhrase
            return Classified(
                error: NewsstandError(.httpStatus, "\(target) answered \(status.status) \(text)", httpStatus: status.status),
                isTransient: status.isTransient, retryAfter: status.retryAfter)
        case let stalled as StallFailure:
            return Classified(error: NewsstandError(.network, "\(target): \(stalled.reason)"), isTransient: true)
        case let mismatch as RangeMismatch:
            return Classified(error: NewsstandError(.network, "\(target): \(mismatch.reason)"), isTransient: true)
        case let error as HTTPClientError:
            switch error {
            case .redirectLimitReached, .redirectCycleDetected:
                return Classified(
                    error: NewsstandError(
                        .tooManyRedirects, "\(target): too many redirects or a redirect loop", underlying: error),
                    isTransient: false)
            case .invalidURL, .emptyHost, .emptyScheme, .alreadyShutdown:
                return Classified(
                    error: NewsstandError(.invalidURL, "\(target): \(error)", underlying: error), isTransient: false)
            case .unsupportedScheme(hop?.url.scheme ?? url.scheme ?? ""):
                return Classified(
                    error: NewsstandError(.invalidURL, "\(target): unsupported URL scheme", underlying: error),
                    isTransient: false)
            case .readTimeout, .connectTimeout, .writeTimeout:
                let what =
                    error == .connectTimeout
                    ? "timed out connecting to \(host)"
                    : error == .readTimeout ? "timed out waiting for data" : "timed out sending the request"
                return Classified(
                    error: NewsstandError(.network, "\(target): \(what)", underlying: error), isTransient: true)
            case .tlsHandshakeTimeout:
                return Classified(
                    error: NewsstandError(
                        .network, "\(target): TLS handshake with \(host) timed out", underlying: error),
                    // A port that accepts but never speaks TLS stays silent: retrying only multiplies the wait.
                    isTransient: false)
            default:
                return Classified(
                    error: NewsstandError(.network, "\(target): \(DownloadEngine.describe(error))", underlying: error),
                    isTransient: true)
            }
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            // A certificate or handshake failure does not heal by retrying.
            let message =
                isCertificateFailure(error)
                ? "certificate problem: \(host) presented a certificate that is not trusted (\(tlsReason(error))); "
                    + "trust its CA with --cacert, SSL_CERT_FILE or SSL_CERT_DIR"
                : "TLS handshake with \(host) failed (\(tlsReason(error)))"
            return Classified(
                error: NewsstandError(.network, "\(target): \(message)", underlying: error), isTransient: false)
        default:
            return Classified(
                error: NewsstandError(.network, "\(target): \(DownloadEngine.describe(error))", underlying: error),
                isTransient: true)
        }
    }

    /// ``classify(_:url:hop:)``, with a refused certificate explained: expired, not yet valid, self-signed, signed
    /// by an unknown CA or for another name, each with its own advice (see ``CertificateDiagnosis``). Only a
    /// direct connection is looked at again; through a proxy the first message stands.
    static func classifyExplained(_ error: any Error, url: URL, hop: Hop) async -> Classified {
        var classified = classify(error, url: url, hop: hop)
        guard isCertificateFailure(error), hop.route == .directTLS, let host = hop.url.host else { return classified }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let chain = await CertificateDiagnosis.presentedChain(host: bare, port: hop.url.port ?? 443)
        let now = Date()
        let hostnameRefused = (error as? NIOSSLExtraError) == .failedToValidateHostname
        guard let problem = CertificateDiagnosis.problem(chain: chain, hostnameRefused: hostnameRefused, now: now)
        else { return classified }
        let text = CertificateDiagnosis.message(problem, host: bare, now: now)
        classified.error = NewsstandError(
            .network, "\(url.absoluteString): certificate problem: \(text)", underlying: error)
        return classified
    }

    /// Failures that are the proxy's, not the server's: it cannot be reached, wants credentials, or will
    /// not open the tunnel. Nil for everything else.
    private static func classifyProxyFailure(_ error: any Error, target: String, proxy: ProxySettings.Proxy)
        -> Classified?
    {
        let name = "the proxy \(proxy.displayName)"
        func network(_ text: String, transient: Bool) -> Classified {
            Classified(error: NewsstandError(.network, "\(target): \(text)", underlying: error), isTransient: transient)
        }
        // Every connection of a proxied route goes to the proxy, so a failure to connect is the proxy's.
        if let error = error as? NIOConnectionError {
            let reasons = Set(error.connectionErrors.map { describe($0.error) }).sorted().joined(separator: ", ")
            return network("cannot connect to \(name)" + (reasons.isEmpty ? "" : " (\(reasons))"), transient: true)
        }
        if let error = error as? IOError, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode) {
            return network("cannot connect to \(name) (\(describe(error)))", transient: true)
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return network("timed out connecting to \(name)", transient: true)
        }
        // 407 from a forward proxy arrives as a response; from a CONNECT, as AHC's error. Neither is retried:
        // the same credentials will be refused again.
        let authenticationRequired =
            (error as? HTTPStatusFailure)?.status == 407
            || (error as? HTTPClientError) == .proxyAuthenticationRequired
        if authenticationRequired {
            let text =
                proxy.username.map { "\(name) refused the credentials of user \"\($0)\"" }
                ?? "\(name) requires credentials (http://user:password@host:port in the proxy variable)"
            return Classified(
                error: NewsstandError(
                    .network, "\(target): \(text) (407 Proxy Authentication Required)", underlying: error,
                    httpStatus: 407),
                isTransient: false)
        }
        guard let error = error as? HTTPClientError else { return nil }
        switch error {
        case .connectTimeout:
            return network("timed out connecting to \(name)", transient: true)
        case .invalidProxyResponse:
            // AHC keeps only that the CONNECT was not answered 200: a refusal, or a failure upstream.
            return network("\(name) refused to open a tunnel (CONNECT) to the server", transient: true)
        case .httpProxyHandshakeTimeout:
            return network("\(name) did not answer the CONNECT request in time", transient: true)
        default:
            return nil
        }
    }

    static func isCertificateFailure(_ error: any Error) -> Bool {
        if let error = error as? NIOSSLExtraError {
            return error == .failedToValidateHostname || error == .serverHostnameImpossibleToMatch
        }
        if let error = error as? NIOSSLError {
            switch error {
            case .unableToValidateCertificate, .noCertificateToValidate: return true
            case .handshakeFailed(let failure): return reasonCode(failure) == "CERTIFICATE_VERIFY_FAILED"
            default: return false
            }
        }
        return false
    }

    /// BoringSSL's reason code (`CERTIFICATE_VERIFY_FAILED`, `WRONG_VERSION_NUMBER`, …). NIOSSL keeps the
    /// packed error code private, so the reason name in its description is the only stable handle.
    private static func reasonCode(_ error: any Error) -> String? {
        let text = String(describing: error)
        guard let range = text.range(of: "OPENSSL_internal:") else { return nil }
        let reason = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return reason.isEmpty ? nil : String(reason)
    }

    private static func tlsReason(_ error: any Error) -> String {
        if let code = reasonCode(error) { return code }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "it was issued for another name"
        }
        let text = String(describing: error)
        return text.count > 160 ? String(text.prefix(160)) + "…" : text
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError, error == .remoteConnectionClosed {
            return "the connection was closed before the whole body arrived"
        }
        if let error = error as? IOError { return POSIX.describe(error.errnoCode).lowercased() }
        if let error = error as? NIOConnectionError {
            let reason = Set(error.connectionErrors.map { describe($0.error) }).sorted().joined(separator: ", ")
            return "cannot connect to \(error.host):\(error.port)" + (reason.isEmpty ? "" : " (\(reason))")
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "timed out connecting" }
        return String(describing: error)
    }
}
