import ArgumentParser
import Newsstand

/// `--template T` of `add`, `subscribe` and `configure`: checked in `validate()`, so a bad template is a usage
/// error (exit 64) that says what is wrong with it.
enum TemplateArgument {
    static let help = ArgumentHelp(
        "File new issues by this layout template, e.g. \"{publication}/{date} {title}.{ext}\".",
        discussion: """
            Placeholders: {publication} {subscription} {title} {name} {date} {year} {month} {day} {n} (a counter \
            that makes the name unique) and {ext} (from the URL, else the Content-Type). Existing issues keep \
            their folders.
            """,
        valueName: "template")

    static func parse(_ text: String?) throws -> LayoutTemplate? {
        guard let text else { return nil }
        do {
            return try LayoutTemplate(text)
        } catch let error as NewsstandError {
            throw ValidationError("--template: \(error.message)")
        }
    }
}
