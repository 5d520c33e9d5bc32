import Crypto
import Foundation
import Logging

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
    ///   index once, so it costs as much as `list`.
    public func subscriptions(countingIssues: Bool = false) async throws -> [Subscription] {
        let layout = self.layout
        let catalog = self.catalog
        return try await runBlocking {
            var subscriptions = try SubscriptionStore(layout: layout).all()
            guard countingIssues, !subscriptions.isEmpty else { return subscriptions }
            let live = Set(try catalog.openIndex().liveEntries().filter { !$0.summary.isBeingRemoved }.map(\.summary.name))
            for index in subscriptions.indices {
                subscriptions[index].issuesHeld = subscriptions[index].issueNames.filter(live.contains).count
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
        let url = try AssetRequest.parseURL(url.absoluteString)
        let mapping = try options.mapping.map { try FeedMapping(json: $0) }
        if let name = options.name { try Library.validateName(name) }
        let store = SubscriptionStore(layout: layout)
        // Fail fast on a duplicate before fetching; checked again under the lock.
        try await runBlocking { try store.checkUnique(name: options.name, url: url, except: nil) }

        let fetched = try await engineForFeeds().fetchDocument(
            url, validators: DocumentValidators(), maxBytes: FeedLimits().maxBodyBytes)
        guard case .body(let body) = fetched.outcome else {
            throw NewsstandError(.invalidFeed, "\(url.absoluteString) answered 304 to a request without validators")
        }
        var notes: [String] = []
        let read = try await readFeed(body, from: fetched, mapping: mapping, following: true, notes: &notes)
        let feedURL = read.url
        let digest = Library.digest(read.body)
        let name = options.name ?? Library.subscriptionName(from: read.document.title, url: feedURL)
        try Library.validateName(name)

        let subscription = Subscription(
            id: Library.newAssetID(), name: name, url: feedURL, format: read.document.format, keep: options.keep,
            downloadsAutomatically: options.downloadsAutomatically, isPaused: false, isGone: false, created: Date(),
            previousURLs: feedURL == url ? [] : [url], lastChecked: nil, lastOutcome: nil,
            etag: read.validators.etag, lastModified: read.validators.lastModified, bodyDigest: digest,
            mappingJSON: options.mapping.map { String(decoding: $0, as: UTF8.self) }, items: [])
        let catalog = self.catalog
        let document = read.document
        let initial = options.initial
        var report = try await runBlocking {
            try catalog.withLock {
                try store.checkUnique(name: name, url: feedURL, except: nil)
                let merge = FeedMerge(
                    subscription: subscription, document: document, selection: .initial(initial),
                    today: IssueDate.utc(Date()))
                return try Library.commit(merge, catalog: catalog, store: store, alwaysWrite: true)
            }
        }
        report.notes += notes
        let id = subscription.id
        if !report.addedIssues.isEmpty { report.prunedIssues = try await applyKeep(of: id) }
        try? await runBlocking { try store.writeStatus(id, checked: Date(), outcome: "subscribed") }
        return report
    }

    // MARK: Refreshing

    /// Refreshes subscriptions while `body` reads one report per subscription as each finishes: the named
    /// ones (paused ones too), or every active one. New items become issues; a subscription's `keep` is
    /// applied. A failing subscription never stops the others: its report carries the error.
    ///
    /// Scoped like ``download(issues:options:isolation:_:)``: the refreshes run only while `body` runs;
    /// when it returns early, throws or is cancelled, those not finished are cancelled (a subscription is
    /// changed only by a whole merge, so none is left half-refreshed).
    /// - Parameters:
    ///   - names: Subscription names, or nil for every subscription that is not paused.
    ///   - backfill: Also add items seen before that never became issues (older than the initial choice).
    ///   - concurrency: How many feeds are fetched at once.
    ///   - isolation: Where `body` runs; the caller's actor by default.
    ///   - body: Reads the reports; by default it reads them all.
    /// - Returns: Every report, in the order they finished.
    /// - Throws: `.subscriptionNotFound` for an unknown name, before anything is fetched; what `body` throws.
    @discardableResult
    public func sync(
        _ names: [String]? = nil, backfill: Bool = false, concurrency: Int = 8,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncStream<SyncReport>) async throws -> Void = { for await _ in $0 {} }
    ) async throws -> [SyncReport] {
        let store = SubscriptionStore(layout: layout)
        let (chosen, damaged) = try await runBlocking { () -> ([Subscription], [NewsstandError]) in
            let (all, damaged) = try store.readable()
            guard let names else { return (all.filter { !$0.isPaused }, damaged) }
            return (
                try names.map { name in
                    guard let found = all.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                        if let error = damaged.first { throw error }
                        throw SubscriptionStore.notFound(name)
                    }
                    return found
                }, []
            )
        }
        // A record that cannot be read fails as its subscription would, and the others go on.
        let unreadable = damaged.map { SyncReport(subscription: "(unreadable record)", outcome: .failed($0)) }
        let (reports, continuation) = AsyncStream<SyncReport>.makeStream()
        return try await withThrowingTaskGroup(of: [SyncReport].self) { outer in
            outer.addTask {
                defer { continuation.finish() }
                return await withTaskGroup(of: SyncReport.self) { group in
                    var all: [SyncReport] = unreadable
                    for report in unreadable { continuation.yield(report) }
                    var next = chosen.makeIterator()
                    for _ in 0..<max(1, concurrency) {
                        guard let subscription = next.next() else { break }
                        group.addTask { await self.refresh(subscription, backfill: backfill) }
                    }
                    while let report = await group.next() {
                        all.append(report)
                        continuation.yield(report)
                        if !Task.isCancelled, let subscription = next.next() {
                            group.addTask { await self.refresh(subscription, backfill: backfill) }
                        }
                    }
                    return all
                }
            }
            do {
                try await body(reports)
            } catch {
                outer.cancelAll()
                _ = try? await outer.next()
                throw error
            }
            outer.cancelAll()
            return try await outer.next() ?? []
        }
    }

    /// Refreshes one subscription; never throws (the report says what failed).
    func refresh(_ subscription: Subscription, backfill: Bool) async -> SyncReport {
        var report = SyncReport(subscription: subscription.name, outcome: .unchanged)
        do {
            report = try await refreshOrThrow(subscription, backfill: backfill)
            if !report.addedIssues.isEmpty { report.prunedIssues = try await applyKeep(of: subscription.id) }
        } catch let error as NewsstandError {
            report.outcome = .failed(error)
            if error.httpStatus == 410 {
                await markGone(subscription)
                report.outcome = .failed(
                    NewsstandError(
                        .subscriptionGone, "\(error.message): the feed is gone; the subscription was paused",
                        underlying: error, httpStatus: 410))
            }
        } catch {
            report.outcome = .failed(NewsstandError(.cancelled, "\(subscription.name): \(error)", underlying: error))
        }
        let store = SubscriptionStore(layout: layout)
        let outcome: String
        switch report.outcome {
        case .unchanged: outcome = "unchanged"
        case .updated: outcome = "updated, \(report.addedIssues.count) new"
        case .failed(let error): outcome = "failed: \(error.message)"
        }
        let id = subscription.id
        try? await runBlocking { try store.writeStatus(id, checked: Date(), outcome: outcome) }
        report.downloadsNewIssues = subscription.downloadsAutomatically
        return report
    }

    private func refreshOrThrow(_ subscription: Subscription, backfill: Bool) async throws -> SyncReport {
        var report = SyncReport(subscription: subscription.name, outcome: .unchanged)
        let mapping = try subscription.mappingJSON.map { try FeedMapping(json: Data($0.utf8)) }
        let fetched = try await engineForFeeds().fetchDocument(
            subscription.url,
            validators: DocumentValidators(etag: subscription.etag, lastModified: subscription.lastModified),
            maxBytes: FeedLimits().maxBodyBytes)
        var movedTo = fetched.permanentURL.flatMap { $0 == subscription.url ? nil : $0 }
        guard case .body(let body) = fetched.outcome else {
            if let movedTo { try await move(subscription, to: movedTo) }
            report.movedTo = movedTo
            return report
        }
        let digest = Library.digest(body)
        if digest == subscription.bodyDigest && movedTo == nil && !backfill {
            return report
        }
        var notes: [String] = []
        let read = try await readFeed(body, from: fetched, mapping: mapping, following: false, notes: &notes)
        movedTo = read.url == subscription.url ? nil : read.url
        report.notes = notes
        report.movedTo = movedTo

        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        let id = subscription.id
        let document = read.document
        let validators = read.validators
        let name = subscription.name
        let newURL = movedTo
        var committed = try await runBlocking { () -> SyncReport in
            try catalog.withLock {
                // Read again under the lock: another sync may have merged this feed meanwhile.
                guard var current = try store.load(id) else {
                    throw NewsstandError(.subscriptionNotFound, "the subscription \(name.debugDescription) was removed")
                }
                if let newURL, newURL != current.url {
                    current.previousURLs.append(current.url)
                    current.url = newURL
                }
                current.etag = validators.etag
                current.lastModified = validators.lastModified
                current.bodyDigest = Library.digest(body)
                current.format = document.format
                let merge = FeedMerge(
                    subscription: current, document: document, selection: .refresh(backfill: backfill),
                    today: IssueDate.utc(Date()))
                return try Library.commit(merge, catalog: catalog, store: store, alwaysWrite: true)
            }
        }
        committed.notes = notes + committed.notes
        committed.movedTo = movedTo
        committed.outcome = .updated
        return committed
    }

    /// Prunes a subscription's issues down to its `keep` (never a pinned one or one in flight), when it
    /// has one; applied whenever a refresh adds issues. Returns the names removed.
    func applyKeep(of id: String) async throws -> [String] {
        let store = SubscriptionStore(layout: layout)
        guard let keep = try await runBlocking({ try store.load(id) })?.keep else { return [] }
        return try await prune(PrunePolicy(keep: keep, subscriptionID: id)).removed.map(\.name)
    }

    /// Writes what a merge decided: new issues and changed ones first, then the subscription's record.
    /// Must run holding the catalog's lock.
    static func commit(
        _ merge: FeedMerge, catalog: Catalog, store: SubscriptionStore, alwaysWrite: Bool = false
    ) throws -> SyncReport {
        var merged = merge.subscription
        var report = SyncReport(subscription: merged.name, outcome: .updated)
        report.rematchedItems = merge.rematched
        report.seenOnly = merge.seenOnly
        if merge.skippedWithoutIdentity > 0 {
            report.notes.append("\(merge.skippedWithoutIdentity) items without an id, enclosure or title were skipped")
        }
        let additions = merge.additions
        let updates = merge.issueUpdates
        if !additions.isEmpty || !updates.isEmpty {
            let names = try catalog.writeHoldingLock { changes -> (added: [(Int, String)], updated: [String], notes: [String]) in
                var added: [(Int, String)] = []
                var updated: [String] = []
                var notes: [String] = []
                for addition in additions {
                    let item = merged.items[addition.itemIndex]
                    do {
                        let name = try stageSubscribedIssue(addition.item, item: item, subscription: merged, in: &changes)
                        added.append((addition.itemIndex, name))
                    } catch let error as NewsstandError {
                        notes.append("item \(item.id.debugDescription) was not added: \(error.message)")
                    }
                }
                for update in updates {
                    let changed = try changes.update(named: update.issueName) { issue in
                        if let origin = update.origin { issue.origin = origin }
                        if let assets = update.assets { Library.follow(assets, in: &issue) }
                    }
                    if changed, update.assets != nil { updated.append(update.issueName) }
                }
                return (added, updated, notes)
            }
            for (index, name) in names.added { merged.items[index].issueName = name }
            report.addedIssues = names.added.map(\.1)
            report.updatedIssues = names.updated
            report.notes += names.notes
        }
        if merge.changed || alwaysWrite || !additions.isEmpty {
            try store.save(merged)
        }
        return report
    }

    /// Adds (or adopts, after a crash between the catalog's write and the subscription's) the issue of one
    /// feed item, under a name from its title made unique by a deterministic suffix.
    static func stageSubscribedIssue(
        _ feedItem: FeedItem, item: SubscriptionItem, subscription: Subscription, in changes: inout CatalogChanges
    ) throws -> String {
        let date = item.date ?? item.firstSeen
        let origin = Issue.Origin(subscriptionID: subscription.id, itemID: item.id, matchedBy: item.matchedBy)
        var requests: [AssetRequest] = []
        for asset in feedItem.assets {
            let request = AssetRequest(url: asset.url, sha256: asset.sha256, unpack: asset.unpack ?? true)
            try request.validate()
            requests.append(request)
        }
        for name in issueNameCandidates(title: feedItem.title, date: date, itemID: item.id, subscription: subscription) {
            if let existing = try changes.issue(named: name) {
                if existing.origin?.subscriptionID == origin.subscriptionID, existing.origin?.itemID == origin.itemID {
                    return name
                }
                continue
            }
            var issue = try stageNewIssue(named: name, date: date, assets: requests, in: &changes)
            issue.origin = origin
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
        var base = cleanTitle(title ?? "")
        if base.isEmpty { base = "\(subscription.name) \(date)" }
        let short = digest(Data(itemID.utf8)).prefix(6)
        var names = [base, "\(base) (\(date))", "\(base) (\(date), \(short))"]
        names += (2...20).map { "\(base) (\(date), \(short)) \($0)" }
        return names
    }

    /// A title as an issue name: control characters and runs of white space become one space, at most
    /// 200 characters.
    static func cleanTitle(_ title: String) -> String {
        var out = ""
        var space = false
        for scalar in title.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
                space = !out.isEmpty
                continue
            }
            if space { out.unicodeScalars.append(" ") }
            space = false
            out.unicodeScalars.append(scalar)
        }
        return out.count > 200 ? String(out.prefix(200)) : out
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

    // MARK: Changing

    /// Changes a subscription's options (name, keep, automatic downloads, pause, mapping).
    /// - Throws: `.subscriptionNotFound`, `.duplicateSubscription` (a rename to a taken name), `.invalidMapping`.
    @discardableResult
    public func changeSubscription(named name: String, _ change: SubscriptionChange) async throws -> Subscription {
        if let newName = change.name { try Library.validateName(newName) }
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

    private func move(_ subscription: Subscription, to url: URL) async throws {
        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        try await runBlocking {
            try catalog.withLock {
                guard var current = try store.load(subscription.id), current.url != url else { return }
                current.previousURLs.append(current.url)
                current.url = url
                try store.save(current)
            }
        }
    }

    private func markGone(_ subscription: Subscription) async {
        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        try? await runBlocking {
            try catalog.withLock {
                guard var current = try store.load(subscription.id) else { return }
                current.isGone = true
                current.isPaused = true
                try store.save(current)
            }
        }
    }

    // MARK: Reading a feed

    struct ReadFeed {
        var url: URL
        var body: Data
        var document: FeedDocument
        var validators: DocumentValidators
    }

    /// Parses a fetched body; follows an HTML page's feed link, and the feed's own "moved to" link, each
    /// only once and only when the new location parses as a feed.
    private func readFeed(
        _ body: Data, from fetched: FetchedDocument, mapping: FeedMapping?, following: Bool, notes: inout [String]
    ) async throws -> ReadFeed {
        // Where the feed lives for good: a temporary redirect (302, 307) does not move it.
        let base = fetched.permanentURL ?? fetched.requestedURL
        let validators = DocumentValidators(etag: fetched.etag, lastModified: fetched.lastModified)
        let finalURL = fetched.finalURL
        switch try await runBlocking({ try FeedParser.parse(body, url: finalURL, mapping: mapping) }) {
        case .feed(let document):
            var read = ReadFeed(url: base, body: body, document: document, validators: validators)
            if let target = document.movedTo, target != base, target != fetched.finalURL {
                do {
                    let moved = try await engineForFeeds().fetchDocument(
                        target, validators: DocumentValidators(), maxBytes: FeedLimits().maxBodyBytes)
                    if case .body(let newBody) = moved.outcome,
                        case .feed(let newDocument) = try FeedParser.parse(newBody, url: moved.finalURL, mapping: mapping)
                    {
                        notes.append("the feed moved to \(target.absoluteString)")
                        read = ReadFeed(
                            url: moved.permanentURL ?? moved.requestedURL, body: newBody, document: newDocument,
                            validators: DocumentValidators(etag: moved.etag, lastModified: moved.lastModified))
                    }
                } catch {
                    notes.append("the feed says it moved to \(target.absoluteString), which did not read as a feed (\(error)); it stays")
                }
            }
            return read
        case .html(let alternates):
            guard let alternate = alternates.first else {
                throw NewsstandError(
                    .invalidFeed, "\(fetched.finalURL.absoluteString) is an HTML page, not a feed, and links to no feed")
            }
            let linked = try await engineForFeeds().fetchDocument(
                alternate, validators: DocumentValidators(), maxBytes: FeedLimits().maxBodyBytes)
            guard case .body(let linkedBody) = linked.outcome,
                case .feed(let document) = try FeedParser.parse(linkedBody, url: linked.finalURL, mapping: mapping)
            else {
                throw NewsstandError(
                    .invalidFeed,
                    "\(fetched.finalURL.absoluteString) is an HTML page; its feed link \(alternate.absoluteString) is not a feed")
            }
            notes.append(
                "\(fetched.finalURL.absoluteString) is an HTML page; read the feed it links to, \(alternate.absoluteString)")
            // Only a new subscription takes the linked feed's URL; a refresh keeps the page the user chose.
            return ReadFeed(
                url: following ? (linked.permanentURL ?? linked.requestedURL) : base, body: linkedBody, document: document,
                validators: following ? DocumentValidators(etag: linked.etag, lastModified: linked.lastModified) : validators)
        }
    }

    func engineForFeeds() -> DownloadEngine {
        let engine = self.engine ?? DownloadEngine(configuration: configuration, logger: logger)
        self.engine = engine
        return engine
    }

    static func digest(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A subscription's default name: the feed's title, else the URL's host.
    static func subscriptionName(from title: String?, url: URL) -> String {
        let cleaned = cleanTitle(title ?? "")
        return cleaned.isEmpty ? (url.host ?? url.absoluteString) : cleaned
    }
}

extension Library {
    /// The answers to an asset request that mean its (signed) link may have expired.
    static let expiredLinkStatuses: Set<Int> = [401, 403, 404, 410]

    /// Refreshes the subscription an issue came from, and returns the asset's URL as the catalog now has
    /// it (the merge points unfinished assets at the feed's current URLs), or nil.
    func refreshedURL(of assetID: String, issueNamed name: String) async -> URL? {
        guard let issue = try? await issue(named: name), let origin = issue.origin else { return nil }
        let store = SubscriptionStore(layout: layout)
        guard let subscription = try? await runBlocking({ try store.load(origin.subscriptionID) }) else { return nil }
        let report = await refresh(subscription, backfill: false)
        if case .failed(let error) = report.outcome {
            logger.info("refreshing \(subscription.name) for an expired link failed: \(error.message)")
            return nil
        }
        return try? await self.issue(named: name)?.assets.first { $0.id == assetID }?.url
    }
}
