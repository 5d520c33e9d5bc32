import Hummingbird
import Logging

/// The request context of `issues serve`: what the security middleware decided, for the handlers.
struct ServeContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// This response's CSP nonce (a fresh one per request).
    var nonce = ""
    /// The `Host` the request named (checked against the allowlist), for absolute links in feeds.
    var authority = ""

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// Uploads are an OPML file or a small form.
    var maxUploadSize: Int { 4 << 20 }
}
