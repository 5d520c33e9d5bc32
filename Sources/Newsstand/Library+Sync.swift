import Foundation
import Logging
import NewsstandCatalog
import NewsstandCore
import NewsstandDownload
import NewsstandFeeds
import NewsstandSubscriptions

/// Refreshing subscriptions: fetch (conditional, outside any lock), read (following an HTML page's feed
/// link and a feed's own "moved to"), merge under the catalog's lock, apply `keep`; and the refresh an
/// expired signed link asks for.
extension Library {
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
    ///   - queueingDownloads: Whether the new issues of a subscription that downloads automatically are put in
    ///     the saved list of pending downloads in the commit that adds them, so that a process killed before
    ///     their download leaves them to the next `resume` or service start (false for `sync --no-download`).
    ///   - concurrency: How many feeds are fetched at once.
    ///   - isolation: Where `body` runs; the caller's actor by default.
    ///   - body: Reads the reports; by default it reads them all.
    /// - Returns: Every report, in the order they finished.
    /// - Throws: `.subscriptionNotFound` for an unknown name, before anything is fetched; what `body` throws.
    @discardableResult
    public func sync(
        _ names: [String]? = nil, backfill: Bool = false, queueingDownloads: Bool = true, concurrency: Int = 8,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncStream<SyncReport>) async throws -> Void = { for await _ in $0 {} }
    ) async throws -> [SyncReport] {
        await removeSubscriptionTemporaries()
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
                        group.addTask {
                            await self.refresh(subscription, backfill: backfill, queueingDownloads: queueingDownloads)
                        }
                    }
                    while let report = await group.next() {
                        all.append(report)
                        continuation.yield(report)
                        if !Task.isCancelled, let subscription = next.next() {
                            group.addTask {
                            await self.refresh(subscription, backfill: backfill, queueingDownloads: queueingDownloads)
                        }
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

    /// Refreshes one subscription; never throws (the report says what failed). `now` is when the check
    /// counts as made (the scheduler's clock; the wall clock otherwise); `gate`, when given, is waited on
    /// just before the feed's request (the service's per-host rule).
    func refresh(
        _ subscription: Subscription, backfill: Bool, queueingDownloads: Bool = true, now: Date = Date(),
        gate: StartGate? = nil
    ) async -> SyncReport {
        var report = SyncReport(subscription: subscription.name, outcome: .unchanged)
        do {
            report = try await refreshOrThrow(
                subscription, backfill: backfill, queueingDownloads: queueingDownloads, now: now, gate: gate)
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
        let status: CheckStatus
        switch report.outcome {
        case .unchanged:
            status = CheckStatus(checked: now, outcome: .unchanged, hints: report.hints)
        case .updated:
            status = CheckStatus(checked: now, outcome: .updated(newIssues: report.addedIssues.count), hints: report.hints)
        case .failed(let error):
            // The feed's ttl is remembered across failures; a Retry-After holds the next check back.
            let hints = FeedHints(
                ttlMinutes: subscription.hints.ttlMinutes, notBefore: error.retryAfter.map { now + $0.timeInterval },
                notBeforeReason: error.retryAfter == nil ? nil : .retryAfter)
            status = CheckStatus(
                checked: now, outcome: .failed(message: error.message), failures: subscription.failures + 1, hints: hints)
        }
        report.hints = status.hints
        let id = subscription.id
        try? await runBlocking { try store.writeStatus(id, status) }
        // Announced when a feed starts failing, not at every failed check: a feed down for a week is one event.
        if case .failed(let error) = report.outcome, !(subscription.lastOutcome?.isFailure ?? false) {
            let failing = CatalogEvent(kind: .subscriptionFailing, subscription: subscription.eventIdentity, reason: error.message)
            let catalog = self.catalog
            do {
                try await runBlocking { try catalog.announce([failing]) }
            } catch {
                logger.warning("cannot record the event of a failing feed: \(error)")
            }
        }
        report.downloadsNewIssues = subscription.downloadsAutomatically
        return report
    }

    private func refreshOrThrow(
        _ subscription: Subscription, backfill: Bool, queueingDownloads: Bool, now: Date, gate: StartGate? = nil
    ) async throws -> SyncReport {
        var report = SyncReport(subscription: subscription.name, outcome: .unchanged)
        let mapping = try subscription.mappingJSON.map { try FeedMapping(json: Data($0.utf8)) }
        // A backfill reads the whole body even when the feed has not changed: the items it adds are old
        // ones, which a 304 would hide. So it sends no validators.
        let requestValidators =
            backfill
            ? DocumentValidators()
            : DocumentValidators(etag: subscription.etag, lastModified: subscription.lastModified)
        if let gate { try await gate.waitForStart(origin: URLCredentials.origin(of: subscription.url)) }
        let fetched = try await startedEngine().fetchDocument(
            subscription.url, validators: requestValidators, maxBytes: FeedLimits().maxBodyBytes,
            headers: credentials.feedHeaders(subscription: subscription.id).sorted { $0.key < $1.key }
                .map { ($0.key, $0.value) })
        var movedTo = fetched.permanentURL.flatMap { $0 == subscription.url ? nil : $0 }
        // A 304 keeps the ttl of the body last read; a body brings its own (or none).
        report.hints = FeedHints(
            ttlMinutes: subscription.hints.ttlMinutes, notBefore: fetched.freshFor.map { now + $0.timeInterval },
            notBeforeReason: fetched.freshFor == nil ? nil : .fresh)
        guard case .body(let body) = fetched.outcome else {
            // A 304 at the end of a permanent redirect moves nothing: no feed was read there (and the validators
            // sent were the old address's). A move is recorded only with a 200 whose feed parsed, below.
            return report
        }
        let digest = Library.digest(body)
        if digest == subscription.bodyDigest && movedTo == nil && !backfill {
            return report
        }
        var notes: [String] = []
        let read = try await readFeed(body, from: fetched, mapping: mapping, following: false, notes: &notes)
        report.hints.ttlMinutes = read.document.ttlMinutes
        let hints = report.hints
        movedTo = read.url == subscription.url ? nil : read.url
        report.notes = notes
        report.movedTo = movedTo

        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        let defaultTemplate = configuration.layoutTemplate
        let id = subscription.id
        let document = read.document
        let validators = read.cacheable ? read.validators : DocumentValidators()
        let merged = read.cacheable ? Library.digest(read.body) : nil
        let name = subscription.name
        let newURL = movedTo
        var committed = try await runBlocking { () -> SyncReport in
            try catalog.withLock {
                // Read again under the lock: another sync may have merged this feed meanwhile.
                guard var current = try store.load(id) else {
                    throw NewsstandError(.subscriptionNotFound, "the subscription \(name.debugDescription) was removed")
                }
                var events: [CatalogEvent] = []
                if let newURL, newURL != current.url {
                    events.append(
                        CatalogEvent(
                            kind: .subscriptionMoved, subscription: current.movedIdentity(to: newURL),
                            detail: Subscription.withoutCredentials(current.url)))
                    current.previousURLs.append(current.url)
                    current.url = newURL
                }
                current.etag = validators.etag
                current.lastModified = validators.lastModified
                current.bodyDigest = merged
                current.format = document.format
                let merge = FeedMerge(
                    subscription: current, document: document, selection: .refresh(backfill: backfill),
                    today: IssueDate.utc(now))
                return try Library.commit(
                    merge, catalog: catalog, store: store, alwaysWrite: true, defaultTemplate: defaultTemplate,
                    queueingDownloads: queueingDownloads && current.downloadsAutomatically, announcing: events)
            }
        }
        committed.notes = notes + committed.notes
        committed.movedTo = movedTo
        committed.hints = hints
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

    private func move(_ subscription: Subscription, to url: URL) async throws {
        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        try await runBlocking {
            try catalog.withLock {
                guard var current = try store.load(subscription.id), current.url != url else { return }
                let moved = CatalogEvent(
                    kind: .subscriptionMoved, subscription: current.movedIdentity(to: url),
                    detail: Subscription.withoutCredentials(current.url))
                current.previousURLs.append(current.url)
                current.url = url
                try store.save(current, announcing: [moved], in: catalog)
            }
        }
    }

    private func markGone(_ subscription: Subscription) async {
        let store = SubscriptionStore(layout: layout)
        let catalog = self.catalog
        try? await runBlocking {
            try catalog.withLock {
                guard var current = try store.load(subscription.id) else { return }
                let announced = current.isGone ? [] : [CatalogEvent(kind: .subscriptionGone, subscription: current.eventIdentity)]
                current.isGone = true
                current.isPaused = true
                try store.save(current, announcing: announced, in: catalog)
            }
        }
    }

    // MARK: Reading a feed

    struct ReadFeed {
        var url: URL
        var body: Data
        var document: FeedDocument
        var validators: DocumentValidators
        /// False when the feed was read through an HTML page at a URL that stays the page's: the page's
        /// validators and digest say nothing about the linked feed, so none are kept (each sync reads it).
        var cacheable = true
    }

    /// Parses a fetched body; follows an HTML page's feed link, and the feed's own "moved to" link, each
    /// only once and only when the new location parses as a feed.
    func readFeed(
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
                    let moved = try await startedEngine().fetchDocument(
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
            let linked = try await startedEngine().fetchDocument(
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
                validators: DocumentValidators(etag: linked.etag, lastModified: linked.lastModified), cacheable: following)
        }
    }
}

extension Library {
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
