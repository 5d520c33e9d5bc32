import Foundation
import NewsstandCatalog

extension Subscription {
    /// What an event says about this subscription: its identity, name and feed URL (without credentials:
    /// events reach hooks and webhooks).
    package var eventIdentity: CatalogEvent.SubscriptionIdentity {
        movedIdentity(to: url)
    }

    /// The identity of this subscription once moved to `url` (the event's `detail` keeps the URL it left).
    package func movedIdentity(to url: URL) -> CatalogEvent.SubscriptionIdentity {
        CatalogEvent.SubscriptionIdentity(id: id, name: name, url: Subscription.withoutCredentials(url))
    }

    /// The URL's text with any user name and password taken out.
    package static func withoutCredentials(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.user != nil || components.password != nil
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }
}
