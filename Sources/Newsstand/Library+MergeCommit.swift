import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandFeeds
import NewsstandSubscriptions

/// The writing half of a merge: what ``FeedMerge`` decided becomes issues and a subscription record,
/// under the catalog's lock. Static (no actor), so `subscribe` and every refresh share it.
extension Library {
    /// Writes what a merge decided: new issues and changed ones first, then the subscription's record.
    /// Must run holding the catalog's lock.
    /// - Parameters:
    ///   - defaultTemplate: How new issues are filed when the subscription names no template.
    ///   - queueingDownloads: Put the new issues' assets in the saved list of pending downloads.
    ///   - events: Subscription events to announce with the subscription's record (written then).
    static func commit(
        _ merge: FeedMerge, catalog: Catalog, store: SubscriptionStore, alwaysWrite: Bool = false,
        defaultTemplate: LayoutTemplate? = nil, queueingDownloads: Bool = false, announcing events: [CatalogEvent] = []
    ) throws -> SyncReport {
        var merged = merge.subscription
        var report = SyncReport(subscription: merged.name, outcome: .updated)
        report.rematchedItems = merge.rematched
        report.seenOnly = merge.seenOnly
        report.notes += merge.duplicateNotes
        if merge.skippedWithoutIdentity > 0 {
            report.notes.append("\(merge.skippedWithoutIdentity) items without an id, enclosure or title were skipped")
        }
        let additions = merge.additions
        let updates = merge.issueUpdates
        if !additions.isEmpty || !updates.isEmpty {
            let names = try catalog.writeHoldingLock {
                changes -> (added: [(Int, String)], updated: [String], extended: [String], notes: [String]) in
                var added: [(Int, String)] = []
                var updated: [String] = []
                var extended: [String] = []
                var notes: [String] = []
                // Issues some item of this subscription already owns: never adopted by another item.
                var owned = Set(merged.items.compactMap(\.issueName))
                for addition in additions {
                    let item = merged.items[addition.itemIndex]
                    do {
                        let name = try stageSubscribedIssue(
                            addition.item, item: item, subscription: merged, owned: owned,
                            template: merged.template ?? defaultTemplate, in: &changes)
                        owned.insert(name)
                        added.append((addition.itemIndex, name))
                        // Queued in the commit that adds the issue: a kill before its download starts leaves it in
                        // the saved list, not added and never fetched.
                        if queueingDownloads, let issue = try changes.issue(named: name) {
                            for asset in issue.assets where !asset.isComplete { changes.markPending(asset.id, issueNamed: name) }
                        }
                    } catch let error as NewsstandError {
                        notes.append("item \(item.id.debugDescription) was not added: \(error.message)")
                    }
                }
                let layout = changes.catalog.layout
                for update in updates {
                    var attached = 0
                    let changed = try changes.update(named: update.issueName) { issue in
                        if let origin = update.origin { issue.origin = origin }
                        if let assets = update.assets { Library.follow(assets, in: &issue) }
                        attached = try Library.attach(update.newExtras, to: &issue, layout: layout)
                    }
                    // A new extra file is what the user needs to hear of; its URL change is part of it.
                    if changed, attached > 0 {
                        extended.append(update.issueName)
                    } else if changed, update.assets != nil {
                        updated.append(update.issueName)
                    }
                }
                return (added, updated, extended, notes)
            }
            for (index, name) in names.added { merged.items[index].issueName = name }
            report.addedIssues = names.added.map(\.1)
            report.updatedIssues = names.updated
            report.extendedIssues = names.extended
            report.notes += names.notes
        }
        if merge.changed || alwaysWrite || !additions.isEmpty || !events.isEmpty {
            try store.save(merged, announcing: events, in: catalog)
        }
        return report
    }

    /// Adds (or adopts, after a crash between the catalog's write and the subscription's) the issue of one
    /// feed item, under a name from its title made unique by a deterministic suffix. An issue in `owned`
    /// belongs to another item of the subscription (one that repeats this item's feed id) and is never adopted.
    static func stageSubscribedIssue(
        _ feedItem: FeedItem, item: SubscriptionItem, subscription: Subscription, owned: Set<String> = [],
        template: LayoutTemplate? = nil, in changes: inout CatalogChanges
    ) throws -> String {
        let date = item.date ?? item.firstSeen
        let origin = Issue.Origin(
            subscriptionID: subscription.id, itemID: FeedIdentity.feedID(item.id), matchedBy: item.matchedBy)
        var requests: [AssetRequest] = []
        for asset in feedItem.assets + feedItem.extras {
            let request = AssetRequest(url: asset.url, sha256: asset.sha256, unpack: asset.unpack ?? true)
            try request.validate()
            requests.append(request)
        }
        for name in issueNameCandidates(title: feedItem.title, date: date, itemID: item.id, subscription: subscription) {
            if let existing = try changes.issue(named: name) {
                if !owned.contains(name), existing.origin?.subscriptionID == origin.subscriptionID,
                    existing.origin?.itemID == origin.itemID
                {
                    return name
                }
                continue
            }
            let filing = template.map {
                Filing(
                    template: $0, publication: subscription.name, subscription: subscription.name,
                    title: feedItem.title)
            }
            var issue = try stageNewIssue(named: name, date: date, assets: requests, filing: filing, in: &changes)
            issue.origin = origin
            let source = Issue.SourceItem(title: feedItem.title, link: feedItem.link, description: feedItem.summary)
            issue.source = source.isEmpty ? nil : source
            // The item's image: its cover's source, fetched by the same engine as the content (resume, checks),
            // never unpacked, marked so that it is not taken for content. One URL the content already has is
            // not fetched twice.
            if let image = feedItem.image, !requests.contains(where: { $0.url == image }) {
                let request = AssetRequest(url: image, unpack: false)
                if (try? request.validate()) != nil,
                    var asset = try CredentialStore(layout: changes.catalog.layout).separating([request]).first?
                        .makeAsset(id: Library.newAssetID())
                {
                    asset.role = .cover
                    issue.assets.append(asset)
                }
            }
            try changes.put(issue)
            return name
        }
        throw NewsstandError(.duplicateIssue, "no free name for the item \(item.id.debugDescription)")
    }

    /// The names an item's issue may take, in order: its title, then the title with its date, then with
    /// its date and a short id, then numbered. Deterministic, so a repeated sync picks the same one.
    static func issueNameCandidates(title: String?, date: IssueDate, itemID: String, subscription: Subscription)
        -> [String]
    {
        var base = IssueName.fromTitle(title ?? "")
        if base.isEmpty { base = "\(subscription.name) \(date)" }
        let short = digest(Data(itemID.utf8)).prefix(6)
        var names = [base, "\(base) (\(date))", "\(base) (\(date), \(short))"]
        names += (2...20).map { "\(base) (\(date), \(short)) \($0)" }
        return names
    }

    /// Adds the extra files a feed gave an item after its issue was made (a late transcript), each as an asset
    /// never unpacked; one the issue already holds (same URL without query) is not added again.
    /// - Returns: How many were added.
    @discardableResult
    static func attach(_ extras: [FeedAsset], to issue: inout Issue, layout: LibraryLayout) throws -> Int {
        guard !issue.isBeingRemoved else { return 0 }
        var added = 0
        var held = Set(issue.assets.compactMap { FeedIdentity.enclosureKey($0.url) })
        for extra in extras {
            guard let key = FeedIdentity.enclosureKey(extra.url), !held.contains(key) else { continue }
            let request = AssetRequest(url: extra.url, sha256: extra.sha256, unpack: false)
            // A URL the catalog would refuse is left out rather than failing the whole sync.
            guard (try? request.validate()) != nil else { continue }
            let separated = try CredentialStore(layout: layout).separating([request])
            issue.assets += separated.map { $0.makeAsset(id: Library.newAssetID()) }
            held.insert(key)
            added += 1
        }
        return added
    }

    /// Points an issue's unfinished assets at the feed's current URLs (matched by URL without query, then
    /// by position); a finished one keeps its URL. The asset's identity and partial file stay, so the
    /// download continues at the new URL with `If-Range`.
    static func follow(_ assets: [FeedAsset], in issue: inout Issue) {
        var unused = Array(assets.indices)
        for index in issue.assets.indices {
            let key = FeedIdentity.enclosureKey(issue.assets[index].url)
            let match =
                unused.first { FeedIdentity.enclosureKey(assets[$0].url) == key }
                ?? (unused.contains(index) ? index : nil)
            guard let match else { continue }
            unused.removeAll { $0 == match }
            if !issue.assets[index].isComplete { issue.assets[index].url = assets[match].url }
        }
    }
}
