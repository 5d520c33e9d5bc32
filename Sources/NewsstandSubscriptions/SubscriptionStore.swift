import Foundation
import NewsstandCatalog
import NewsstandCore

/// The subscriptions' files: one record each in `.catalog/subscriptions/`, and a last-checked status
/// each in `.sync/`. A library holds tens or hundreds of subscriptions, so reading them all is cheap;
/// what changes is written one record at a time, atomically, under the catalog's lock.
package struct SubscriptionStore: Sendable {
    let layout: LibraryLayout

    /// Every subscription, by name, with its last-checked status.
    /// - Throws: the first record that cannot be read, naming it.
    package func all() throws -> [Subscription] {
        let (found, damaged) = try readable()
        if let first = damaged.first { throw first }
        return found
    }

    /// Every subscription that can be read, by name, and an error for each record that cannot.
    package func readable() throws -> (subscriptions: [Subscription], damaged: [NewsstandError]) {
        var found: [Subscription] = []
        var damaged: [NewsstandError] = []
        for id in try recordIDs() {
            do {
                if let subscription = try load(id) { found.append(subscription) }
            } catch let error as NewsstandError where error.code == .manifestUnreadable {
                damaged.append(error)
            }
        }
        return (Self.byName(found), damaged)
    }

    /// The identifiers of the records in `.catalog/subscriptions/` (a file each, `<id>.json`).
    private func recordIDs() throws -> [String] {
        guard POSIX.exists(layout.subscriptions) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: layout.subscriptions)
                .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.map { String($0.dropLast(5)) }
        } catch {
            throw NewsstandError(.io, "cannot read \(layout.subscriptions): \(error.localizedDescription)", underlying: error)
        }
    }

    /// Subscriptions in the order every listing shows them: by name, case-insensitively, then by identifier.
    private static func byName(_ subscriptions: [Subscription]) -> [Subscription] {
        subscriptions.sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
    }

    /// The subscription with this identifier, or nil.
    package func load(_ id: String) throws -> Subscription? {
        let path = layout.subscription(id)
        guard let data = try AtomicFile.read(path) else { return nil }
        var subscription = try SubscriptionRecord.decode(data, path: path)
        if let status = try? AtomicFile.read(layout.syncStatus(id)).flatMap(CheckStatus.init(decoding:)) {
            subscription.lastChecked = status.checked
            subscription.lastOutcome = status.outcome
            subscription.failures = status.failures
            subscription.hints = status.hints
        }
        return subscription
    }

    /// Every subscription without its items or status (``SubscriptionHeaders``): names, URLs and settings.
    /// - Throws: the first record that cannot be read, naming it.
    package func headers() throws -> [Subscription] {
        let cache = SubscriptionHeaders.shared
        var headers: [Subscription] = []
        var listed: Set<String> = []
        for id in try recordIDs() {
            let path = layout.subscription(id)
            listed.insert(path)
            let header = try cache.header(at: path) { path in
                try AtomicFile.read(path).map { try SubscriptionRecord.decode($0, path: path, withItems: false) }
            }
            if let header { headers.append(header) }
        }
        cache.forget(cache.paths(under: layout.subscriptions).filter { !listed.contains($0) })
        return headers
    }

    /// The subscription with this name (case-insensitively), or nil.
    package func find(_ name: String) throws -> Subscription? {
        let wanted = name.lowercased()
        guard let header = try headers().first(where: { $0.name.lowercased() == wanted }) else { return nil }
        return try load(header.id)
    }

    /// The subscription whose feed carries `podcastGUID`: the same show, wherever its feed now lives.
    package func find(podcastGUID: String?) throws -> Subscription? {
        guard let podcastGUID else { return nil }
        guard let header = try headers().first(where: { $0.podcastGUID == podcastGUID }) else { return nil }
        return try load(header.id)
    }

    /// Throws `.duplicateSubscription` when another subscription has this name or URL.
    package func checkUnique(name: String?, url: URL?, except id: String?) throws {
        for other in Self.byName(try headers()) where other.id != id {
            if let name, other.name.lowercased() == name.lowercased() {
                throw NewsstandError(.duplicateSubscription, "a subscription named \(other.name.debugDescription) already exists")
            }
            if let url, other.url == url || other.previousURLs.contains(url) {
                throw NewsstandError(
                    .duplicateSubscription,
                    "\(url.absoluteString) is already subscribed as \(other.name.debugDescription)")
            }
        }
    }

    /// Writes a subscription's record atomically and durably. Call holding the catalog's lock.
    package func save(_ subscription: Subscription) throws {
        try POSIX.makeDirectory(layout.subscriptions)
        try AtomicFile.write(SubscriptionRecord.encode(subscription), to: layout.subscription(subscription.id))
    }

    /// Writes a subscription's record atomically and durably, with `events` announced in the same crash-safe
    /// step (appended to the event log if and only if the record landed). Call holding the catalog's lock.
    package func save(_ subscription: Subscription, announcing events: [CatalogEvent], in catalog: Catalog) throws {
        try POSIX.makeDirectory(layout.subscriptions)
        try catalog.replaceFile(
            layout.subscription(subscription.id), with: SubscriptionRecord.encode(subscription), announcing: events)
    }

    /// Deletes a subscription's record and status. Call holding the catalog's lock.
    package func delete(_ id: String) throws {
        try POSIX.unlinkIfPresent(layout.subscription(id))
        try POSIX.fsyncDirectory(layout.subscriptions)
        try POSIX.unlinkIfPresent(layout.syncStatus(id))
    }

    /// Records when a subscription was last checked and what came of it; not durable (a lost status only
    /// makes the next check come sooner).
    package func writeStatus(_ id: String, _ status: CheckStatus) throws {
        try POSIX.makeDirectory(layout.syncStatus)
        try AtomicFile.write(status.encoded(), to: layout.syncStatus(id), durable: false)
    }

    /// Deletes what writers killed between writing a temporary and renaming it left behind. Every record
    /// writer holds the catalog's lock, as the caller must, so each record temporary is a dead writer's.
    /// Statuses are written without the lock: a status temporary goes only when no process has the PID in
    /// its name (a live one may be a reused PID; `verify --repair` takes what is left).
    package func removeTemporariesOfDeadWriters() {
        // Housekeeping: one that cannot be deleted (a read-only folder) stays for `verify` to name, and stops
        // neither the service nor a sync.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: layout.subscriptions)) ?? []
        where LibraryLayout.isTemporary(name) {
            try? POSIX.unlinkIfPresent("\(layout.subscriptions)/\(name)")
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: layout.syncStatus)) ?? []
        where LibraryLayout.isTemporary(name) {
            guard let pid = LibraryLayout.temporaryWriter(name), !POSIX.isRunning(pid) else { continue }
            try? POSIX.unlinkIfPresent("\(layout.syncStatus)/\(name)")
        }
    }

    package static func notFound(_ name: String) -> NewsstandError {
        NewsstandError(.subscriptionNotFound, "no subscription named \(name.debugDescription)")
    }

    package init(layout: NewsstandCore.LibraryLayout) {
        self.layout = layout
    }
}
