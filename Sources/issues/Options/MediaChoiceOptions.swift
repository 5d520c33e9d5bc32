import ArgumentParser
import Newsstand

/// `--prefer` and `--max-bytes`: which of an item's several media files a subscription takes, for `subscribe`
/// and `configure` alike (configure adds its `--no-…` flags beside them).
struct MediaChoiceOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "When an item offers several media files, take this type (audio/opus) or prefix (audio/).",
            valueName: "type"))
    var prefer: String?

    @Option(
        name: .long,
        help: ArgumentHelp("When an item offers several media files, skip those announced larger (50M).", valueName: "size"))
    var maxBytes: ByteSize?

    func validate() throws {
        if let prefer, MediaPolicy.normalized(prefer) == nil {
            throw ValidationError("--prefer takes a MIME type (audio/opus) or a prefix (audio/), not \(prefer.debugDescription)")
        }
    }
}
