import Foundation
import NewsstandCore
import NewsstandCatalog
import NewsstandFeeds

/// The stored form of a subscription: one JSON file per subscription, `.catalog/subscriptions/<id>.json`,
/// sorted keys, replaced atomically. Items are one line each so that a diff of two versions reads well.
///
/// ```
/// {"created":"2026-11-23T10:00:00Z","download":true,"etag":"\"v3\"","format":"rss","id":"…","items":[
/// {"aliases":[],"assets":["https://…/ep1.mp3?sig=…"],"date":"2026-11-20","enclosure":"https://…/ep1.mp3",
///  "id":"ep-1","issue":"Episode 1","matched":"id","seen":"2026-11-23","titleDate":"Episode 1|2026-11-20"}
/// ],"keep":null,"name":"Loopback Podcast","paused":false,"url":"https://…/feed.xml","version":1}
/// ```
enum SubscriptionRecord {
    static let version: Int64 = 1

    /// - Parameter withItems: False reads the record without its items (left empty): what a duplicate check
    ///   or a lookup by name needs. The items are nearly all of a busy feed's record (800 items ≈ 250 KB), and
    ///   stepping over them costs a scan instead of a value per item.
    static func decode(_ data: Data, path: String, withItems: Bool = true) throws -> Subscription {
        do {
            let object = try data.withUnsafeBytes { raw in
                try JSONReader.parseObject(raw.bindMemory(to: UInt8.self), skipping: withItems ? nil : "items")
            }
            if case .integer(let version)? = object["version"], version > Self.version {
                throw NewsstandError(
                    .manifestFromNewerVersion,
                    "\(path) has version \(version), newer than this issues understands (\(Self.version)); it was left untouched")
            }
            return try subscription(object)
        } catch let error as NewsstandError {
            throw error
        } catch {
            throw NewsstandError(
                .manifestUnreadable, "\(path) is not a valid subscription record (\(error)); it was left untouched",
                underlying: error)
        }
    }

    private static func subscription(_ object: [String: JSONValue]) throws -> Subscription {
        let id = try object.string("id", at: "")
        guard SafePathComponent(validating: id) != nil else { throw CatalogShapeError("id is not a safe name") }
        let url = try AssetRequest.parseURL(try object.string("url", at: ""))
        let formatText = try object.optionalString("format", at: "")
        let created = try object.optionalString("created", at: "").flatMap { try? Date($0, strategy: .iso8601) }
        var previous: [URL] = []
        for value in try object.array("previousURLs", at: "", optional: true) {
            guard case .string(let text) = value else { throw CatalogShapeError("previousURLs holds a non-string") }
            previous.append(try AssetRequest.parseURL(text))
        }
        let keep: Int?
        switch object["keep"] {
        case nil, .null?: keep = nil
        case .integer(let value)? where value >= 0 && value <= Int64(Int32.max): keep = Int(value)
        default: throw CatalogShapeError("keep is not a count")
        }
        var items: [SubscriptionItem] = []
        for (index, value) in try object.array("items", at: "", optional: true).enumerated() {
            items.append(try item(value, at: "items[\(index)]"))
        }
        var subscription = Subscription(
            id: id, name: try object.string("name", at: ""), url: url, format: formatText.flatMap(FeedFormat.init),
            keep: keep, downloadsAutomatically: try object.optionalBool("download", at: "") ?? true,
            isPaused: try object.optionalBool("paused", at: "") ?? false,
            isGone: try object.optionalBool("gone", at: "") ?? false, created: created ?? Date(timeIntervalSince1970: 0),
            previousURLs: previous, lastChecked: nil, lastOutcome: nil,
            etag: try object.optionalString("etag", at: ""), lastModified: try object.optionalString("lastModified", at: ""),
            bodyDigest: try object.optionalString("bodyDigest", at: ""),
            mappingJSON: try object.optionalString("mapping", at: ""), items: items)
        subscription.podcastGUID = try object.optionalString("podcastGUID", at: "")
        switch object["every"] {
        case nil, .null?: break
        case .integer(let seconds)? where seconds >= 60 && seconds <= 366 * 86_400: subscription.checkEvery = .seconds(seconds)
        default: throw CatalogShapeError("every is not a number of seconds between a minute and a year")
        }
        let maxBytes: Int64?
        switch object["maxBytes"] {
        case nil, .null?: maxBytes = nil
        case .integer(let value)? where value >= 0: maxBytes = value
        default: throw CatalogShapeError("maxBytes is not a size in bytes")
        }
        subscription.mediaPolicy = MediaPolicy(
            preferredType: try object.optionalString("prefer", at: ""), maxBytes: maxBytes)
        if let template = try object.optionalString("template", at: "") {
            do {
                subscription.template = try LayoutTemplate(template)
            } catch let error as NewsstandError {
                throw CatalogShapeError("template: \(error.message)")
            }
        }
        return subscription
    }

    private static func item(_ value: JSONValue, at path: String) throws -> SubscriptionItem {
        guard case .object(let object) = value else { throw CatalogShapeError("\(path) is not an object") }
        func strings(_ key: String) throws -> [String] {
            try object.array(key, at: path, optional: true).map {
                guard case .string(let text) = $0 else { throw CatalogShapeError("\(path).\(key) holds a non-string") }
                return text
            }
        }
        func date(_ key: String) throws -> IssueDate? {
            guard let text = try object.optionalString(key, at: path) else { return nil }
            guard let date = IssueDate(text) else { throw CatalogShapeError("\(path).\(key) is not a date") }
            return date
        }
        return SubscriptionItem(
            id: try object.string("id", at: path), aliases: try strings("aliases"),
            enclosure: try object.optionalString("enclosure", at: path),
            titleDate: try object.optionalString("titleDate", at: path),
            issueName: try object.optionalString("issue", at: path), assetURLs: try strings("assets"),
            date: try date("date"), firstSeen: try date("seen") ?? IssueDate(year: 1970, month: 1, day: 1)!,
            matchedBy: try object.optionalString("matched", at: path).flatMap(Issue.ItemMatch.init(rawValue:)) ?? .id)
    }

    static func encode(_ subscription: Subscription) -> Data {
        var writer = JSONWriter(capacity: 512 + subscription.items.count * 320)
        writer.raw("{")
        writer.key("bodyDigest", first: true)
        writer.optionalString(subscription.bodyDigest)
        writer.key("created")
        writer.string(subscription.created.formatted(.iso8601))
        writer.key("download")
        writer.bool(subscription.downloadsAutomatically)
        writer.key("etag")
        writer.optionalString(subscription.etag)
        // Written only when set, so the records of other subscriptions keep their bytes.
        if let every = subscription.checkEvery {
            writer.key("every")
            writer.integer(every.components.seconds)
        }
        writer.subscriptionFormatAndState(subscription)
        writer.key("items")
        writer.raw("[")
        for (index, item) in subscription.items.enumerated() {
            writer.raw(index == 0 ? "\n" : ",\n")
            write(item, to: &writer)
        }
        writer.raw("\n]")
        writer.key("keep")
        writer.optionalInteger(subscription.keep.map(Int64.init))
        writer.key("lastModified")
        writer.optionalString(subscription.lastModified)
        writer.key("mapping")
        writer.optionalString(subscription.mappingJSON)
        // The policy's keys are written only when set, so the records of other subscriptions keep their bytes.
        if let maxBytes = subscription.mediaPolicy.maxBytes {
            writer.key("maxBytes")
            writer.optionalInteger(maxBytes)
        }
        writer.subscriptionNameAndPlace(subscription)
        writer.key("version")
        writer.integer(version)
        writer.raw("}\n")
        return Data(writer.bytes)
    }

    private static func write(_ item: SubscriptionItem, to writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("aliases", first: true)
        writer.array(item.aliases) { $0.string($1) }
        writer.key("assets")
        writer.array(item.assetURLs) { $0.string($1) }
        writer.key("date")
        writer.optionalString(item.date?.description)
        writer.key("enclosure")
        writer.optionalString(item.enclosure)
        writer.key("id")
        writer.string(item.id)
        writer.key("issue")
        writer.optionalString(item.issueName)
        writer.key("matched")
        writer.string(item.matchedBy.rawValue)
        writer.key("seen")
        writer.string(item.firstSeen.description)
        writer.key("titleDate")
        writer.optionalString(item.titleDate)
        writer.raw("}")
    }
}

/// When a subscription was last checked, how it went and what the feed said about the next check:
/// rewritten by every check, so it lives in `.sync/`, outside the catalog; losing it loses nothing but
/// the display and the scheduler's memory of a backoff (the feed is then checked once more, soon).
package struct CheckStatus: Sendable, Hashable {
    package var checked: Date
    package var outcome: CheckOutcome
    package var failures: Int
    package var hints: FeedHints

    package init(checked: Date, outcome: CheckOutcome, failures: Int = 0, hints: FeedHints = FeedHints()) {
        self.checked = checked
        self.outcome = outcome
        self.failures = failures
        self.hints = hints
    }

    package func encoded() -> Data {
        var writer = JSONWriter(capacity: 192)
        writer.raw("{")
        writer.key("checked", first: true)
        writer.string(checked.formatted(.iso8601))
        writer.key("failures")
        writer.integer(Int64(failures))
        writer.key("notBefore")
        writer.optionalString(hints.notBefore?.formatted(.iso8601))
        writer.key("notBeforeReason")
        writer.optionalString(hints.notBeforeReason?.rawValue)
        writer.key("outcome")
        writer.string(outcome.description)
        writer.key("ttl")
        writer.optionalInteger(hints.ttlMinutes.map(Int64.init))
        writer.raw("}\n")
        return Data(writer.bytes)
    }

    /// The status, or nil for a file that does not read as one (it is only a cache of the last check).
    package init?(decoding data: Data) {
        guard
            let value = try? data.withUnsafeBytes({ try JSONReader.parse($0.bindMemory(to: UInt8.self)) }),
            case .object(let object) = value, case .string(let checked)? = object["checked"],
            case .string(let outcome)? = object["outcome"], let date = try? Date(checked, strategy: .iso8601)
        else { return nil }
        self.checked = date
        self.outcome = CheckOutcome(text: outcome)
        if case .integer(let count)? = object["failures"], count >= 0, count < 10_000 { failures = Int(count) } else { failures = 0 }
        hints = FeedHints()
        if case .integer(let ttl)? = object["ttl"], ttl > 0, ttl <= 7 * 24 * 60 { hints.ttlMinutes = Int(ttl) }
        if case .string(let text)? = object["notBefore"], let notBefore = try? Date(text, strategy: .iso8601),
            case .string(let reason)? = object["notBeforeReason"], let known = FeedHints.ServerReason(rawValue: reason)
        {
            hints.notBefore = notBefore
            hints.notBeforeReason = known
        }
    }
}

extension JSONWriter {
    /// Fields of a subscription in both its stored record and `subscriptions --json`, in key order:
    /// `format`, `gone`, `id`.
    package mutating func subscriptionFormatAndState(_ subscription: Subscription) {
        key("format")
        optionalString(subscription.format?.rawValue)
        key("gone")
        bool(subscription.isGone)
        key("id")
        string(subscription.id)
    }

    /// The last fields of a subscription in both its stored record and `subscriptions --json`, in key
    /// order: `name`, `paused`, `previousURLs`, `template` (when set), `url`.
    package mutating func subscriptionNameAndPlace(_ subscription: Subscription) {
        key("name")
        string(subscription.name)
        key("paused")
        bool(subscription.isPaused)
        // Written only when the feed gives one, so the records of other feeds stay as they were.
        if let guid = subscription.podcastGUID {
            key("podcastGUID")
            string(guid)
        }
        if let prefer = subscription.mediaPolicy.preferredType {
            key("prefer")
            string(prefer)
        }
        key("previousURLs")
        array(subscription.previousURLs) { $0.string($1.absoluteString) }
        // Written only when set, so the records of other subscriptions keep their bytes.
        if let template = subscription.template {
            key("template")
            string(template.text)
        }
        key("url")
        string(subscription.url.absoluteString)
    }
}
