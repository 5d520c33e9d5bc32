import Crypto
import Foundation
import NewsstandCatalog
import NewsstandCore
import NewsstandDownload
import NewsstandFeeds
import NewsstandSubscriptions

/// Subscriptions: a publisher's feed becomes dated issues (NewsstandKit's apps asked their own server
/// for new issues; this asks any publisher's feed). The feed is fetched outside any lock; what it adds
/// is merged under the catalog's lock, issues first and the subscription's record second, so two
/// `sync`s never add an item twice and a crash between the two is healed by the next refresh (an issue
/// already made for the item, found by its origin, is adopted instead of added again).
extension Library {
    // MARK: Reading

    /// Every subscription, by name.
    /// - Parameter countingIssues: Also count the issues each still holds in the library
    ///   (``Subscription/issuesHeld``; pruned and removed ones no longer count). This reads the catalog's
    ///   summary once, so it costs as much as `list`.
    public func subscriptions(countingIssues: Bool = false) async throws -> [Subscription] {
        let layout = self.layout
        let catalog = self.catalog
        return try await runBlocking {
            var subscriptions = try SubscriptionStore(layout: layout).all()
            guard countingIssues, !subscriptions.isEmpty else { return subscriptions }
            let live = Set(try catalog.listing().lazy.filter { !$0.isBeingRemoved }.map(\.name))
            for index in subscriptions.indices {
                // Distinct names: a store from before repeated ids were told apart may point two items at one issue.
                subscriptions[index].issuesHeld = Set(subscriptions[index].issueNames).filter(live.contains).count
            }
            return subscriptions
        }
    }

    /// The subscription with this name (case-insensitively), or nil.
    public func subscription(named name: String) async throws -> Subscription? {
        let layout = self.layout
        return try await runBlocking { try SubscriptionStore(layout: layout).find(name) }
    }

    // MARK: Subscribing

    /// Subscribes to a feed: fetches it, records the subscription and adds the items `options.initial`
    /// chooses as issues (the others are remembered as seen and never added by a later sync).
    ///
    /// An HTML page is followed to the feed it links (`<link rel="alternate">`), and the subscription
    /// records that feed's URL.
    /// - Returns: What was added. Downloading the new issues is the caller's next step.
    /// - Throws: `.invalidURL`, `.duplicateSubscription`, `.invalidMapping`, and the fetch and parse
    ///   errors (`.httpStatus`, `.network`, `.invalidFeed`, `.unsafeFeed`); nothing is recorded then.
    @discardableResult
    public func subscribe(to url: URL, options: SubscribeOptions = SubscribeOptions()) async throws -> SyncReport {
        // A password in the URL is used for this fetch at once and stored (0600, by origin) only with the
        // subscription; the subscription's record keeps the URL without it.
        let (url, credential) = URLCredentials.split(try AssetRequest.parseURL(url.absoluteString))
        if let credential { credentials.remember(credential, forOriginOf: url) }
        for (header, value) in options.headers {
            if let problem = RequestHeaders.problem(name: header, value: value) {
                throw NewsstandError(.invalidHeader, "the request header \(header.debugDescription) \(problem)")
            }
        }
        let feedHeaders = options.headers
        let mapping = try options.mapping.map { try FeedMapping(json: $0) }
        if let name = options.name { try IssueName.validate(name) }
        let store = SubscriptionStore(layout: layout)
        // Fail fast on a duplicate before fetching; checked again under the lock.
        try await runBlocking { try store.checkUnique(name: options.name, url: url, except: nil) }

        let fetched = try await startedEngine().fetchDocument(
            url, validators: DocumentValidators(), maxBytes: FeedLimits().maxBodyBytes,
            headers: feedHeaders.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        guard case .body(let body) = fetched.outcome else {
            throw NewsstandError(.invalidFeed, "\(url.absoluteString) answered 304 to a request without validators")
        }
        var notes: [String] = []
        let read = try await readFeed(body, from: fetched, mapping: mapping, following: true, notes: &notes)
        let feedURL = read.url
        let digest = Library.digest(read.body)
        let name = options.name ?? Library.subscriptionName(from: read.document.title, url: feedURL)
        try IssueName.validate(name)

        var draft = Subscription(
            id: Library.newAssetID(), name: name, url: feedURL, format: read.document.format, keep: options.keep,
            downloadsAutomatically: options.downloadsAutomatically, isPaused: false, isGone: false, created: Date(),
            previousURLs: feedURL == url ? [] : [url], lastChecked: nil, lastOutcome: nil,
            etag: read.validators.etag, lastModified: read.validators.lastModified, bodyDigest: digest,
            mappingJSON: options.mapping.map { String(decoding: $0, as: UTF8.self) }, items: [])
        draft.mediaPolicy = options.mediaPolicy
        draft.template = options.template
        let subscription = draft
        let defaultTemplate = configuration.layoutTemplate
        let catalog = self.catalog
        let document = read.document
        let initial = options.initial
        let credentials = self.credentials
        let (subscribed, id) = try await runBlocking {
            try catalog.withLock { () -> (SyncReport, String) in
                // The same show moved to another URL (same podcast:guid): that subscription follows the move and
                // reads this body as a refresh, so no item becomes a second issue.
                if let moved = try store.find(podcastGUID: document.podcastGUID), moved.url != feedURL {
                    let report = try Library.follow(
                        moved, to: feedURL, document: document, validators: read.validators, digest: digest,
                        catalog: catalog, store: store, defaultTemplate: defaultTemplate)
                    return (report, moved.id)
                }
                try store.checkUnique(name: name, url: feedURL, except: nil)
                if credential != nil || !feedHeaders.isEmpty {
                    try credentials.update { contents in
                        if let credential { contents.origins[URLCredentials.origin(of: url)] = credential }
                        if !feedHeaders.isEmpty { contents.feedHeaders[subscription.id] = feedHeaders }
                    }
                }
                let merge = FeedMerge(
                    subscription: subscription, document: document, selection: .initial(initial),
                    today: IssueDate.utc(Date()))
                let report = try Library.commit(
                    merge, catalog: catalog, store: store, alwaysWrite: true, defaultTemplate: defaultTemplate,
                    announcing: [CatalogEvent(kind: .subscriptionAdded, subscription: subscription.eventIdentity)])
                return (report, subscription.id)
            }
        }
        var report = subscribed
        report.notes += notes
        if !report.addedIssues.isEmpty { report.prunedIssues = try await applyKeep(of: id) }
        let status = CheckStatus(
            checked: Date(), outcome: .subscribed,
            hints: FeedHints(
                ttlMinutes: read.document.ttlMinutes, notBefore: fetched.freshFor.map { Date() + $0.timeInterval },
                notBeforeReason: fetched.freshFor == nil ? nil : .fresh))
        try? await runBlocking { try store.writeStatus(id, status) }
        return report
    }

    /// Moves an existing subscription to `url`, where the same show (its podcast:guid) now is, and merges the
    /// body read there as a refresh of it. Blocking; the catalog lock is held.
    private static func follow(
        _ subscription: Subscription, to url: URL, document: FeedDocument, validators: DocumentValidators,
        digest: String, catalog: Catalog, store: SubscriptionStore, defaultTemplate: LayoutTemplate?
    ) throws -> SyncReport {
        var moved = subscription
        moved.previousURLs.removeAll { $0 == url }
        moved.previousURLs.append(moved.url)
        moved.url = url
        moved.etag = validators.etag
        moved.lastModified = validators.lastModified
        moved.bodyDigest = digest
        let merge = FeedMerge(
            subscription: moved, document: document, selection: .refresh(backfill: false), today: IssueDate.utc(Date()))
        var report = try Library.commit(
            merge, catalog: catalog, store: store, alwaysWrite: true, defaultTemplate: defaultTemplate)
        report.movedTo = url
        report.notes.append(
            "the same show (podcast:guid) as the subscription \(moved.name.debugDescription), which now reads this URL")
        return report
    }

    // MARK: Changing

    /// Changes a subscription's options (name, keep, automatic downloads, pause, mapping).
    /// - Throws: `.subscriptionNotFound`, `.duplicateSubscription` (a rename to a taken name), `.invalidMapping`.
    @discardableResult
    public func changeSubscription(named name: String, _ change: SubscriptionChange) async throws -> Subscription {
        if let newName = change.name { try IssueName.validate(newName) }
        if let mapping = change.mapping ?? nil { _ = try FeedMapping(json: mapping) }
        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        return try await runBlocking {
            try catalog.withLock {
                guard var subscription = try store.find(name) else { throw SubscriptionStore.notFound(name) }
                if let newName = change.name {
                    try store.checkUnique(name: newName, url: nil, except: subscription.id)
                    subscription.name = newName
                }
                if let keep = change.keep { subscription.keep = keep }
                if let download = change.downloadsAutomatically { subscription.downloadsAutomatically = download }
                if let paused = change.isPaused {
                    subscription.isPaused = paused
                    if !paused { subscription.isGone = false }
                }
                if change.preferredType != nil || change.maxBytes != nil {
                    subscription.mediaPolicy = MediaPolicy(
                        preferredType: change.preferredType ?? subscription.mediaPolicy.preferredType,
                        maxBytes: change.maxBytes ?? subscription.mediaPolicy.maxBytes)
                }
                if let template = change.template { subscription.template = template }
                if let every = change.checkEvery {
                    if let every, every < .seconds(60) {
                        throw NewsstandError(.invalidConfiguration, "a check interval must be at least a minute")
                    }
                    subscription.checkEvery = every
                }
                if let mapping = change.mapping {
                    subscription.mappingJSON = mapping.map { String(decoding: $0, as: UTF8.self) }
                    // A new mapping reads the same body differently: the next sync must not skip it.
                    subscription.bodyDigest = nil
                    subscription.etag = nil
                    subscription.lastModified = nil
                }
                try store.save(subscription)
                return subscription
            }
        }
    }

    /// Drops a subscription. Its issues stay unless `removeIssues`.
    /// - Returns: The issues removed.
    @discardableResult
    public func unsubscribe(named name: String, removeIssues: Bool = false) async throws -> [String] {
        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        let subscription = try await runBlocking { () -> Subscription in
            try catalog.withLock {
                guard let subscription = try store.find(name) else { throw SubscriptionStore.notFound(name) }
                try store.delete(subscription.id)
                return subscription
            }
        }
        guard removeIssues else { return [] }
        var removed: [String] = []
        for issueName in subscription.issueNames {
            guard let issue = try await issue(named: issueName), issue.origin?.subscriptionID == subscription.id else {
                continue
            }
            try await removeIssue(named: issueName)
            removed.append(issueName)
        }
        return removed
    }

    // MARK: Helpers

    static func digest(_ data: Data) -> String {
        FileDigest.hex(SHA256.hash(data: data))
    }

    /// A subscription's default name: the feed's title, else the URL's host.
    static func subscriptionName(from title: String?, url: URL) -> String {
        let cleaned = IssueName.fromTitle(title ?? "")
        return cleaned.isEmpty ? (url.host ?? url.absoluteString) : cleaned
    }
}

extension Library {
    /// Subscribes to every feed outline of an OPML file, each with `options` (its name from the outline).
    /// Tolerant: an entry that fails (a bad URL, a feed that cannot be read, a name taken by another feed)
    /// is reported and the others go on. A feed already subscribed (at its URL or one it moved from) is
    /// left as it is and reported as such (``OPMLEntry/alreadySubscribed``), so importing the same file
    /// again changes nothing and fails nothing.
    /// - Throws: `.invalidFeed` when the data is not OPML at all.
    public func subscribe(opml data: Data, options: SubscribeOptions = SubscribeOptions()) async throws -> [OPMLEntry] {
        var entries: [OPMLEntry] = []
        let layout = self.layout
        let existing = try await runBlocking { try SubscriptionStore(layout: layout).all() }
        for outline in try OPMLDocument.outlines(data) {
            var entry = OPMLEntry(title: outline.title, url: nil, result: .failure(NewsstandError(.invalidURL, "")))
            do {
                guard let text = outline.xmlURL else {
                    throw NewsstandError(.invalidURL, "the outline has no xmlUrl")
                }
                let url = try AssetRequest.parseURL(text)
                entry.url = url
                if let known = existing.first(where: { $0.url == url || $0.previousURLs.contains(url) }) {
                    entry.alreadySubscribed = known.name
                    entry.result = .success(SyncReport(subscription: known.name, outcome: .unchanged))
                    entries.append(entry)
                    continue
                }
                var own = options
                if let title = outline.title, !IssueName.fromTitle(title).isEmpty { own.name = IssueName.fromTitle(title) }
                entry.result = .success(try await subscribe(to: url, options: own))
            } catch let error as NewsstandError {
                entry.result = .failure(error)
            }
            entries.append(entry)
        }
        return entries
    }
}
