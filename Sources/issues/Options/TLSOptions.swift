import ArgumentParser
import Foundation
import Newsstand

/// `--cacert`, for the commands that download: a private CA trusted without root, as with curl.
struct TLSOptions: ParsableArguments {
    @Option(
        name: .customLong("cacert"),
        help: ArgumentHelp(
            "Also trust the CA certificates in this PEM file (repeatable).",
            discussion: "Added to the system's trust store, as are SSL_CERT_FILE and SSL_CERT_DIR.",
            valueName: "file"))
    var caCertificateFiles: [String] = []

    func validate() throws {
        for path in caCertificateFiles where !FileManager.default.isReadableFile(atPath: path) {
            let why =
                FileManager.default.fileExists(atPath: path) ? "cannot be read (permission denied)" : "no such file"
            throw ValidationError("--cacert \(path): \(why)")
        }
    }

    /// `configuration` with these CA files added.
    func applied(to configuration: Library.Configuration) -> Library.Configuration {
        var configuration = configuration
        configuration.trustedCertificateFiles += caCertificateFiles.map { URL(fileURLWithPath: $0) }
        return configuration
    }
}
