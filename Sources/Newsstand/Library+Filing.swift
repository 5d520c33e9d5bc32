import NewsstandCore
import NewsstandCatalog

/// How a new issue is filed by a layout template: the template and what its placeholders stand for beyond the
/// issue's own name and date.
struct Filing: Sendable {
    var template: LayoutTemplate
    /// `{publication}`: the subscription's name for a subscribed issue; else the issue's publication.
    var publication: String?
    /// `{subscription}`: the subscription's name.
    var subscription: String?
    /// `{title}`: the feed item's title; else the issue's name.
    var title: String?
}

extension Library {
    /// A new issue filed by `filing`, its place rendered and made unique, its folders made (so that a later
    /// issue's own folder never takes the shared folder's name). The caller stages it and claims its place.
    static func filedIssue(
        named name: String, date: IssueDate, publication: String?, filing: Filing, in changes: inout CatalogChanges
    ) throws -> Issue {
        var unfiled = Issue(name: name, date: date, folderName: "")
        unfiled.publication = publication
        let values = LayoutTemplate.Values(
            publication: filing.publication ?? unfiled.publicationName, subscription: filing.subscription,
            title: filing.title ?? name, name: name, date: date)
        let place = try uniqueFiledPlace(filing.template, values) {
            try changes.isFolderClaimed($0)
        }
        try IssueContent.makeFolders(place.folder, layout: changes.catalog.layout)
        return Issue(name: name, date: date, folderName: place.folder, fileStem: place.stem)
    }

    /// A filed issue's folder and file stem: the template's rendering, counted up (`{n}`, else a ` (n)` suffix)
    /// until no other issue claims that place, in a top folder that is no other issue's own folder.
    static func uniqueFiledPlace(
        _ template: LayoutTemplate, _ values: LayoutTemplate.Values, isClaimed: (String) throws -> Bool
    ) throws -> (folder: String, stem: String) {
        for attempt in 1...10_000 {
            var place = template.render(values, attempt: attempt)
            var parts = place.folder.split(separator: "/").map(String.init)
            if let top = parts.first, try isClaimed(top) {
                // An issue with a folder of its own has this name: the shared folder takes the next free one.
                var n = 2
                var candidate = SafePathComponent(sanitizing: top).withSuffix(n).value
                while try isClaimed(candidate) {
                    n += 1
                    candidate = SafePathComponent(sanitizing: top).withSuffix(n).value
                }
                parts[0] = candidate
                place.folder = parts.joined(separator: "/")
            }
            if try !isClaimed("\(place.folder)/\(place.stem)") { return place }
        }
        throw NewsstandError(.duplicateIssue, "no free file name for \(values.name.debugDescription) under \(template)")
    }
}
