import ArgumentParser
import Foundation
import Newsstand

struct AddAsset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-asset",
        abstract: "Add an asset to an issue and print its identifier.",
        discussion: "Like NKIssue.addAsset(with:). Archives are detected by content and unpacked unless --no-unpack.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Argument(help: "The issue's name.", completion: IssueNameCompletion.kind)
    var name: String

    @Argument(help: "The asset's URL (http or https).")
    var url: String

    @Option(name: .long, help: ArgumentHelp("The expected SHA-256, 64 hexadecimal digits.", valueName: "hex"))
    var sha256: String?

    @Flag(name: .long, help: "Keep an archive as a plain file instead of unpacking it.")
    var noUnpack = false

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "A request header sent with every request of this asset, e.g. 'Authorization: Bearer TOKEN' (repeatable). Kept in the catalog, never shown in full.",
            valueName: "name: value"))
    var headers: [String] = []

    func validate() throws {
        do {
            _ = try AssetRequest.parseURL(url)
        } catch let error as NewsstandError {
            throw ValidationError(error.message)
        }
        if let sha256, !AssetRequest.isValidSHA256(sha256) {
            throw ValidationError("--sha256 must be 64 hexadecimal digits (got \(sha256.count) characters)")
        }
        do {
            _ = try requestHeaders()
        } catch let error as NewsstandError {
            throw ValidationError("--header: \(error.message)")
        }
    }

    /// The `--header` values by name; a name given twice (in any case) is refused.
    private func requestHeaders() throws -> [String: String] {
        try HeaderLines.parse(headers)
    }

    func run() async throws {
        let request = AssetRequest(
            url: try AssetRequest.parseURL(url), sha256: sha256, unpack: !noUnpack, headers: try requestHeaders())
        let library = try await libraryOptions.open()
        let asset = try await library.addAsset(toIssueNamed: name, request)
        Terminal.output(asset.id)
    }
}
