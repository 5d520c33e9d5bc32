import ArgumentParser
import Foundation
import Newsstand

/// Tab completion of issue names: the shell asks `issues` itself, which reads the names from the
/// library's index (the one `--library` names on the line being completed, else the default).
enum IssueNameCompletion {
    static let kind = CompletionKind.custom { (words: [String], _: Int, prefix: String) async -> [String] in
        await names(words: words, prefix: prefix)
    }

    static func names(words: [String], prefix: String) async -> [String] {
        var arguments: [String] = []
        for (index, word) in words.enumerated() {
            if word == "--library", index + 1 < words.count {
                arguments = ["--library", words[index + 1]]
            } else if word.hasPrefix("--library=") {
                arguments = [word]
            }
        }
        // Completion must never print an error into the user's command line: any failure means no names.
        guard let options = try? LibraryOptions.parse(arguments), let url = try? options.resolvedURL(),
            let library = try? await Library.open(at: url, createIfMissing: false),
            let summaries = try? await library.summaries()
        else { return [] }
        return summaries.lazy.map(\.name).filter { $0.hasPrefix(prefix) }
    }
}
