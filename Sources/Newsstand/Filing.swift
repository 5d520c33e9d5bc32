import NewsstandCore

/// How a new issue is filed by a layout template: the template and what its placeholders stand for beyond the
/// issue's own name and date.
struct Filing: Sendable {
    var template: LayoutTemplate
    /// `{publication}`: the subscription's name for a subscribed issue; else the publication.
    var publication: String?
    /// `{subscription}`: the subscription's name.
    var subscription: String?
    /// `{title}`: the feed item's title; else the name.
    var title: String?
}
