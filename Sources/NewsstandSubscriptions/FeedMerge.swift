import Foundation
import NewsstandCore
import NewsstandFeeds

/// How a feed's items are recognised across refreshes, whatever the publisher changes.
///
/// An item's identity is its feed id, else its enclosure URL without the query, else title + date.
/// A feed that changes an item's id (a CMS migration), rotates its enclosure's signed query, or
/// re-titles it must not make a second issue (castget#67, podcast-dl#139, AntennaPod#5729,
/// gpodder#1407); two different items must never be merged either. So an unknown id is matched to a
/// known item by enclosure (without query), then by title + date, and only when that known item's own
/// identity is absent from the current feed (else it is still there, and the newcomer is another item)
/// and no other item of this feed claimed it first.
package enum FeedIdentity {
    /// The URL without query and fragment, scheme and host lowercased: what stays when a CDN re-signs it.
    package static func enclosureKey(_ url: URL) -> String? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.query = nil
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        components.user = nil
        components.password = nil
        return components.string
    }

    static func titleDate(title: String?, date: Date?) -> String? {
        guard let title, !title.isEmpty else { return nil }
        return "\(title)|\(date.map { IssueDate.utc($0).description } ?? "")"
    }

    /// The identity of a feed item, or nil when it has no id, no asset and no title.
    static func identity(of item: FeedItem) -> String? {
        if let id = item.id, !id.isEmpty { return id }
        if let url = item.assets.first?.url, let key = enclosureKey(url) { return key }
        return titleDate(title: item.title, date: item.date)
    }

    /// Joins a repeated id and an enclosure into the identity of a later item that repeats the id: U+001F,
    /// which no feed text keeps (``FeedContext`` makes control characters spaces), so it never collides.
    static let repeatSeparator: Character = "\u{1F}"

    /// The feed's own id within an identity (all of it, but for an item told apart from an earlier one with
    /// the same id): what the issue's origin records.
    package static func feedID(_ identity: String) -> String {
        identity.split(separator: repeatSeparator, maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            ?? identity
    }

    /// The identity of each item of one document, nil for an item that is dropped.
    ///
    /// Some publishers give several items one id (a CMS that writes the show's URL as every guid). The first
    /// item wins the id; a later one with an enclosure of its own is another episode, told apart by that
    /// enclosure (the id, ``repeatSeparator``, the enclosure without query), so neither episode's URL is ever
    /// lost or swapped; a later one without (the same enclosure, or none) is the same item again and is dropped.
    /// Items already known under such an identity keep it whatever order the feed lists them in (matched by
    /// enclosure first), so a reordered feed changes no issue.
    /// - Returns: The identities, and one note per repeated item (what became of it).
    static func identities(of items: [FeedItem], known: [SubscriptionItem]) -> (identities: [String?], notes: [String])
    {
        let plain = items.map(identity(of:))
        var counts: [String: Int] = [:]
        for identity in plain.compactMap({ $0 }) { counts[identity, default: 0] += 1 }
        let repeated = Set(counts.filter { $0.value > 1 }.keys)
        guard !repeated.isEmpty else { return (plain, []) }

        let enclosures = items.map { $0.assets.first.flatMap { enclosureKey($0.url) } }
        var knownByEnclosure: [String: String] = [:]
        for item in known where repeated.contains(feedID(item.id)) {
            if let enclosure = item.enclosure { knownByEnclosure[enclosure] = knownByEnclosure[enclosure] ?? item.id }
        }
        var result = plain
        var taken = Set<String>()
        // The enclosures each repeated id's items already stand for: one more with the same is no new episode.
        var enclosuresOf: [String: Set<String>] = [:]
        var settled = Set<Int>()
        for (position, identity) in plain.enumerated() {
            guard let identity, repeated.contains(identity), let enclosure = enclosures[position],
                let knownID = knownByEnclosure[enclosure], feedID(knownID) == identity, !taken.contains(knownID)
            else { continue }
            result[position] = knownID
            taken.insert(knownID)
            enclosuresOf[identity, default: []].insert(enclosure)
            settled.insert(position)
        }
        var notes: [String] = []
        for (position, identity) in plain.enumerated() where !settled.contains(position) {
            guard let identity, repeated.contains(identity) else { continue }
            let enclosure = enclosures[position]
            let sameMedia = enclosure.map { enclosuresOf[identity]?.contains($0) ?? false } ?? false
            if !taken.contains(identity), !sameMedia {
                taken.insert(identity)  // the first wins
                if let enclosure { enclosuresOf[identity, default: []].insert(enclosure) }
                continue
            }
            let title = (items[position].title ?? "(untitled)").debugDescription
            if let enclosure, !sameMedia {
                enclosuresOf[identity, default: []].insert(enclosure)
                let own = identity + String(repeatSeparator) + enclosure
                result[position] = own
                taken.insert(own)
                notes.append(
                    "item \(title) repeats the id \(identity.debugDescription) of an earlier item; told apart by its enclosure")
            } else {
                result[position] = nil
                notes.append(
                    "item \(title) repeats the id \(identity.debugDescription) of an earlier item and was skipped (the first wins)")
            }
        }
        for (position, identity) in result.enumerated() where settled.contains(position) && identity != plain[position] {
            let title = (items[position].title ?? "(untitled)").debugDescription
            notes.append(
                "item \(title) repeats the id \(FeedIdentity.feedID(identity ?? "").debugDescription) of another item; told apart by its enclosure")
        }
        return (result, notes)
    }
}

extension IssueDate {
    /// The calendar day of `date` in UTC: the one rule of ``IssueDate/init(_:timeZone:)``.
    package static func utc(_ date: Date) -> IssueDate { IssueDate(date, timeZone: .gmt) }
}

/// The outcome of matching a feed document against what a subscription has seen: which items are new,
/// which become issues, and which known issues' asset URLs changed. Pure: no I/O, testable alone.
package struct FeedMerge {
    /// A new item to add as an issue.
    package struct Addition {
        package var itemIndex: Int
        package var item: FeedItem
    }

    /// A known item whose issue must follow the feed: new asset URLs, or a new identity.
    package struct IssueUpdate {
        package var issueName: String
        /// The feed's assets when their URLs changed.
        package var assets: [FeedAsset]?
        /// The issue's new origin when the item was recognised under a changed id.
        package var origin: Issue.Origin?
        /// Extra files (``FeedItem/extras``) the feed gives now and the item did not have before (a transcript
        /// published after the episode): added to the issue unless it already holds the same file.
        package var newExtras: [FeedAsset] = []
    }

    package var subscription: Subscription
    package var additions: [Addition] = []
    package var issueUpdates: [IssueUpdate] = []
    package var rematched = 0
    package var seenOnly = 0
    package var skippedWithoutIdentity = 0
    /// What became of the items that repeat an earlier item's id (``FeedIdentity/identities(of:known:)``).
    package var duplicateNotes: [String] = []
    /// Whether anything in the subscription's stored items changed.
    package var changed = false

    /// Which items become issues.
    package enum Selection {
        /// A new subscription: the initial choice applies to every item.
        case initial(InitialItems)
        /// A refresh: every unseen item becomes an issue; with `backfill`, also seen items that never did.
        case refresh(backfill: Bool)
    }

    package init(subscription: Subscription, document: FeedDocument, selection: Selection, today: IssueDate) {
        self.subscription = subscription
        if let guid = document.podcastGUID, subscription.podcastGUID != guid {
            self.subscription.podcastGUID = guid
            changed = true
        }
        var lookup = KnownItems(subscription.items)
        let (identities, duplicateNotes) = FeedIdentity.identities(of: document.items, known: subscription.items)
        self.duplicateNotes = duplicateNotes
        let present = Set(identities.compactMap { $0 })
        let plainIdentities = duplicateNotes.isEmpty ? identities : document.items.map(FeedIdentity.identity(of:))
        var claimed = Set<Int>()
        var newItems: [(index: Int, item: FeedItem)] = []

        for (position, item) in document.items.enumerated() {
            guard let identity = identities[position] else {
                // A repeated id's later item is noted, not counted as one without identity.
                if plainIdentities[position] == nil { skippedWithoutIdentity += 1 }
                continue
            }
            let keys = ItemKeys(
                identity: identity, enclosure: item.assets.first.flatMap { FeedIdentity.enclosureKey($0.url) },
                titleDate: FeedIdentity.titleDate(title: item.title, date: item.date))
            /// A known item that may take this identity: not claimed yet, and not itself still in the feed.
            func available(_ index: Int?) -> Int? {
                guard let index, !claimed.contains(index) else { return nil }
                return present.contains(self.subscription.items[index].id) ? nil : index
            }
            var matchedBy = Issue.ItemMatch.id
            var match = lookup.byIdentity[identity].flatMap { claimed.contains($0) ? nil : $0 }
            if match == nil, let enclosure = keys.enclosure, let index = available(lookup.byEnclosure[enclosure]) {
                match = index
                matchedBy = .enclosure
            }
            if match == nil, let titleDate = keys.titleDate, let index = available(lookup.byTitleDate[titleDate]) {
                match = index
                matchedBy = .titleDate
            }
            if let index = match {
                claimed.insert(index)
                merge(item, into: index, keys: keys, matchedBy: matchedBy, selection: selection, lookup: &lookup)
                continue
            }
            let (chosen, urls) = self.chosen(item, held: [])
            self.subscription.items.append(
                SubscriptionItem(
                    id: identity, enclosure: keys.enclosure, titleDate: keys.titleDate, assetURLs: urls,
                    date: chosen.date.map(IssueDate.utc), firstSeen: today))
            let index = self.subscription.items.count - 1
            lookup.insert(index, keys)
            claimed.insert(index)
            changed = true
            newItems.append((index, chosen))
        }

        switch selection {
        case .refresh:
            additions += newItems.map { Addition(itemIndex: $0.index, item: $0.item) }
        case .initial(let initial):
            let chosen = FeedMerge.initialChoice(of: newItems, initial)
            additions = chosen.map { Addition(itemIndex: $0.index, item: $0.item) }
            seenOnly = newItems.count - chosen.count
        }
    }

    /// How a feed item is known: its identity, its first enclosure's URL without query, its title and date.
    private struct ItemKeys {
        var identity: String
        var enclosure: String?
        var titleDate: String?
    }

    /// The stored items by each of their keys (the first holder of a key keeps it: a store written before
    /// repeated ids were told apart may hold two items with one id, and the later one must not take the
    /// first one's issue).
    private struct KnownItems {
        var byIdentity: [String: Int] = [:]
        var byEnclosure: [String: Int] = [:]
        var byTitleDate: [String: Int] = [:]

        init(_ items: [SubscriptionItem]) {
            for (index, item) in items.enumerated() {
                byIdentity[item.id] = byIdentity[item.id] ?? index
                for alias in item.aliases { byIdentity[alias] = byIdentity[alias] ?? index }
                if let enclosure = item.enclosure { byEnclosure[enclosure] = byEnclosure[enclosure] ?? index }
                if let titleDate = item.titleDate { byTitleDate[titleDate] = byTitleDate[titleDate] ?? index }
            }
        }

        /// A new item's keys: it holds them from now on.
        mutating func insert(_ index: Int, _ keys: ItemKeys) {
            byIdentity[keys.identity] = index
            if let enclosure = keys.enclosure { byEnclosure[enclosure] = index }
            if let titleDate = keys.titleDate { byTitleDate[titleDate] = index }
        }
    }

    /// The item as its issue takes it: the media the policy chooses (for a known item, the rendition it
    /// already holds), then the extras; and the URLs stored for it. The extras are stored with the media's
    /// URLs, so an unchanged feed compares equal (no write) and a new or re-signed extra shows as a change.
    private func chosen(_ item: FeedItem, held: [String]) -> (item: FeedItem, urls: [String]) {
        var chosen = item
        chosen.assets = subscription.mediaPolicy.assets(for: item, held: held)
        return (chosen, (chosen.assets + chosen.extras).map(\.url.absoluteString))
    }

    /// Merges a feed item into the known item at `index` it matched: a renamed id (the new one leads, the old
    /// one stays an alias), new keys and date, changed or new files (an update of its issue), and with
    /// backfill an issue for a seen item that never had one.
    private mutating func merge(
        _ feedItem: FeedItem, into index: Int, keys: ItemKeys, matchedBy: Issue.ItemMatch, selection: Selection,
        lookup: inout KnownItems
    ) {
        var known = subscription.items[index]
        let before = known
        let (item, urls) = chosen(feedItem, held: known.assetURLs)
        if known.id != keys.identity {
            if !known.aliases.contains(known.id) { known.aliases.append(known.id) }
            known.aliases.removeAll { $0 == keys.identity }
            known.id = keys.identity
            known.matchedBy = matchedBy
            lookup.byIdentity[keys.identity] = index
            rematched += 1
        }
        if let enclosure = keys.enclosure { known.enclosure = enclosure }
        if let titleDate = keys.titleDate { known.titleDate = titleDate }
        if let date = item.date { known.date = IssueDate.utc(date) }
        var update = IssueUpdate(issueName: known.issueName ?? "")
        if known.assetURLs != urls, !urls.isEmpty {
            // Compared without query, as the issue's assets are: a re-signed URL is the same file.
            let had = Set(known.assetURLs.compactMap { URL(string: $0).flatMap(FeedIdentity.enclosureKey) })
            update.newExtras = item.extras.filter { extra in
                FeedIdentity.enclosureKey(extra.url).map { !had.contains($0) } ?? false
            }
            known.assetURLs = urls
            update.assets = item.assets + item.extras
        }
        if known.id != before.id {
            update.origin = Issue.Origin(
                subscriptionID: subscription.id, itemID: FeedIdentity.feedID(known.id), matchedBy: known.matchedBy)
        }
        if known.issueName != nil, update.assets != nil || update.origin != nil {
            issueUpdates.append(update)
        }
        if known != before {
            subscription.items[index] = known
            changed = true
        }
        if case .refresh(backfill: true) = selection, known.issueName == nil {
            additions.append(Addition(itemIndex: index, item: item))
        }
    }

    /// The new items a new subscription's initial choice takes.
    private static func initialChoice(
        of newItems: [(index: Int, item: FeedItem)], _ initial: InitialItems
    ) -> [(index: Int, item: FeedItem)] {
        switch initial {
        case .all:
            return newItems
        case .since(let day):
            return newItems.filter { $0.item.date.map { IssueDate.utc($0) >= day } ?? false }
        case .newest(let count):
            // Newest by date; undated items keep the feed's order (feeds list newest first) after dated ones.
            let ordered = newItems.enumerated().sorted { a, b in
                switch (a.element.item.date, b.element.item.date) {
                case (let x?, let y?) where x != y: return x > y
                case (.some, nil): return true
                case (nil, .some): return false
                default: return a.offset < b.offset
                }
            }
            return ordered.prefix(max(0, count)).map(\.element)
        }
    }
}
