import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The identity rules of subscriptions, on feed documents built by hand: what the SPEC promises about
/// duplicates, renamed ids, rotated queries, and items that must never be merged.
@Suite(.timeLimit(.minutes(5))) struct FeedMergeTests {
    static let today = IssueDate(year: 2026, month: 11, day: 23).unsafelyUnwrapped

    static func date(_ text: String) -> Date {
        (try? Date(text + "T12:00:00Z", strategy: .iso8601)) ?? Date(timeIntervalSince1970: 0)
    }

    static func item(_ id: String?, _ title: String?, _ day: String?, _ url: String?) -> FeedItem {
        FeedItem(
            id: id, title: title, date: day.map(date),
            assets: url.flatMap { URL(string: $0) }.map { [FeedAsset(url: $0)] } ?? [])
    }

    static func document(_ items: [FeedItem]) -> FeedDocument {
        FeedDocument(format: .rss, title: "Loop", items: items, movedTo: nil)
    }

    static func emptySubscription() -> Subscription {
        Subscription(
            id: "0123456789abcdef", name: "Loop", url: URL(string: "http://127.0.0.1/feed").unsafelyUnwrapped,
            format: .rss, keep: nil, downloadsAutomatically: true, isPaused: false, isGone: false,
            created: Date(timeIntervalSince1970: 0), previousURLs: [], lastChecked: nil, lastOutcome: nil, etag: nil,
            lastModified: nil, bodyDigest: nil, mappingJSON: nil, items: [])
    }

    /// Merges `document` into `subscription` as a refresh and marks the additions as issues, as `commit` does.
    static func refresh(_ subscription: Subscription, _ document: FeedDocument, backfill: Bool = false) -> FeedMerge {
        var merge = FeedMerge(
            subscription: subscription, document: document, selection: .refresh(backfill: backfill), today: today)
        for addition in merge.additions {
            merge.subscription.items[addition.itemIndex].issueName = addition.item.title ?? addition.item.id
        }
        return merge
    }

    static let three = document([
        item("ep-3", "Episode 3", "2026-11-20", "http://cdn.example/ep3.mp3?sig=a"),
        item("ep-2", "Episode 2", "2026-11-13", "http://cdn.example/ep2.mp3?sig=a"),
        item("ep-1", "Episode 1", "2026-11-06", "http://cdn.example/ep1.mp3?sig=a"),
    ])

    @Test func initialNewestTakesTheNewestByDateAndRemembersTheRest() {
        let merge = FeedMerge(
            subscription: Self.emptySubscription(),
            document: Self.document([
                Self.item("old", "Old", "2026-01-01", nil), Self.item("new", "New", "2026-11-01", nil),
                Self.item("mid", "Mid", "2026-06-01", nil),
            ]), selection: .initial(.newest(2)), today: Self.today)
        #expect(merge.additions.map(\.item.id) == ["new", "mid"])
        #expect(merge.seenOnly == 1)
        #expect(merge.subscription.items.count == 3)
    }

    @Test func initialSinceAndAll() {
        let since = FeedMerge(
            subscription: Self.emptySubscription(), document: Self.three,
            selection: .initial(.since(IssueDate("2026-11-13").unsafelyUnwrapped)), today: Self.today)
        #expect(since.additions.map(\.item.id) == ["ep-3", "ep-2"])
        let all = FeedMerge(
            subscription: Self.emptySubscription(), document: Self.three, selection: .initial(.all), today: Self.today)
        #expect(all.additions.count == 3)
        #expect(all.seenOnly == 0)
    }

    @Test func aRepeatedRefreshAddsNothingAndChangesNothing() {
        let first = Self.refresh(Self.emptySubscription(), Self.three)
        #expect(first.additions.count == 3)
        let second = Self.refresh(first.subscription, Self.three)
        #expect(second.additions.isEmpty)
        #expect(!second.changed)
        #expect(second.issueUpdates.isEmpty)
    }

    @Test func aChangedGUIDWithTheSameEnclosureIsTheSameItem() {
        let first = Self.refresh(Self.emptySubscription(), Self.three)
        let renamed = Self.document([
            Self.item("urn:new:3", "Episode 3", "2026-11-20", "http://cdn.example/ep3.mp3?sig=b"),
            Self.item("ep-2", "Episode 2", "2026-11-13", "http://cdn.example/ep2.mp3?sig=a"),
            Self.item("ep-1", "Episode 1", "2026-11-06", "http://cdn.example/ep1.mp3?sig=a"),
        ])
        let second = Self.refresh(first.subscription, renamed)
        #expect(second.additions.isEmpty)
        #expect(second.rematched == 1)
        let known = second.subscription.items.first { $0.id == "urn:new:3" }
        #expect(known?.aliases == ["ep-3"])
        #expect(known?.matchedBy == .enclosure)
        #expect(second.issueUpdates.count == 1)
        #expect(second.issueUpdates.first?.origin?.itemID == "urn:new:3")
        #expect(second.issueUpdates.first?.assets?.first?.url.query == "sig=b")
        // And the old id, should it come back, is still that item.
        let third = Self.refresh(second.subscription, Self.three)
        #expect(third.additions.isEmpty)
    }

    @Test func aRotatedQueryWithoutGUIDIsTheSameItem() {
        let noGUID = Self.document([Self.item(nil, "Episode 3", "2026-11-20", "http://cdn.example/ep3.mp3?sig=a")])
        let first = Self.refresh(Self.emptySubscription(), noGUID)
        #expect(first.additions.count == 1)
        let rotated = Self.document([Self.item(nil, "Episode 3", "2026-11-20", "http://cdn.example/ep3.mp3?sig=zz")])
        let second = Self.refresh(first.subscription, rotated)
        #expect(second.additions.isEmpty)
        #expect(second.rematched == 0)
        #expect(second.issueUpdates.first?.assets?.first?.url.absoluteString == "http://cdn.example/ep3.mp3?sig=zz")
    }

    @Test func titleAndDateMatchWhenIDAndEnclosureBothChange() {
        let first = Self.refresh(Self.emptySubscription(), Self.three)
        let moved = Self.document([
            Self.item("cms2-3", "Episode 3", "2026-11-20", "http://new-cdn.example/3.mp3"),
            Self.item("ep-2", "Episode 2", "2026-11-13", "http://cdn.example/ep2.mp3?sig=a"),
            Self.item("ep-1", "Episode 1", "2026-11-06", "http://cdn.example/ep1.mp3?sig=a"),
        ])
        let second = Self.refresh(first.subscription, moved)
        #expect(second.additions.isEmpty)
        #expect(second.subscription.items.first { $0.id == "cms2-3" }?.matchedBy == .titleDate)
    }

    @Test func twoDifferentItemsAreNeverMerged() {
        // A feed that reuses one placeholder enclosure for two episodes, both still listed.
        let first = Self.refresh(
            Self.emptySubscription(),
            Self.document([Self.item("a", "Part A", "2026-11-20", "http://cdn.example/placeholder.mp3")]))
        let second = Self.refresh(
            first.subscription,
            Self.document([
                Self.item("a", "Part A", "2026-11-20", "http://cdn.example/placeholder.mp3"),
                Self.item("b", "Part B", "2026-11-21", "http://cdn.example/placeholder.mp3"),
            ]))
        #expect(second.additions.map(\.item.id) == ["b"])
        #expect(second.rematched == 0)
        // Two new items in one document never take one known item between them.
        let third = Self.refresh(
            first.subscription,
            Self.document([
                Self.item("x", "Part X", "2026-11-22", "http://cdn.example/placeholder.mp3"),
                Self.item("y", "Part Y", "2026-11-23", "http://cdn.example/placeholder.mp3"),
            ]))
        #expect(third.rematched == 1)
        #expect(third.additions.count == 1)
    }

    @Test func backfillAddsSeenItemsThatNeverBecameIssues() {
        let initial = FeedMerge(
            subscription: Self.emptySubscription(), document: Self.three, selection: .initial(.newest(1)),
            today: Self.today)
        var subscription = initial.subscription
        for addition in initial.additions { subscription.items[addition.itemIndex].issueName = addition.item.title }
        #expect(Self.refresh(subscription, Self.three).additions.isEmpty)
        let backfill = Self.refresh(subscription, Self.three, backfill: true)
        #expect(backfill.additions.map(\.item.id) == ["ep-2", "ep-1"])
    }

    @Test func itemsWithoutAnyIdentityAreSkipped() {
        let merge = Self.refresh(Self.emptySubscription(), Self.document([Self.item(nil, nil, "2026-11-20", nil)]))
        #expect(merge.additions.isEmpty)
        #expect(merge.skippedWithoutIdentity == 1)
    }

    @Test func issueNamesAreDeterministicAndUnique() {
        let subscription = Self.emptySubscription()
        let day = IssueDate("2026-11-20").unsafelyUnwrapped
        let names = Library.issueNameCandidates(title: "  News\n\tof the day ", date: day, itemID: "x", subscription: subscription)
        #expect(names[0] == "News of the day")
        #expect(names[1] == "News of the day (2026-11-20)")
        #expect(names[2].hasPrefix("News of the day (2026-11-20, "))
        #expect(Set(names).count == names.count)
        #expect(names == Library.issueNameCandidates(title: "News of the day", date: day, itemID: "x", subscription: subscription))
        #expect(Library.issueNameCandidates(title: nil, date: day, itemID: "x", subscription: subscription)[0] == "Loop 2026-11-20")
    }

    @Test func subscriptionRecordsRoundTrip() throws {
        var subscription = Self.refresh(Self.emptySubscription(), Self.three).subscription
        subscription.keep = 5
        subscription.etag = "\"v1\""
        subscription.items[0].aliases = ["old \"id\""]
        let data = SubscriptionRecord.encode(subscription)
        let decoded = try SubscriptionRecord.decode(data, path: "test")
        #expect(decoded == subscription)
        // Written only when the feed gives one: the records of other feeds keep their bytes.
        #expect(!String(decoding: data, as: UTF8.self).contains("podcastGUID"))
        subscription.podcastGUID = "917393e3-1b1e-5cef-ace4-edaa54e1f810"
        let withGUID = try SubscriptionRecord.decode(SubscriptionRecord.encode(subscription), path: "test")
        #expect(withGUID == subscription)
        #expect(withGUID.podcastGUID == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
    }

    /// A record read without its items is the record less its items, and the items are still checked for
    /// syntax (a damaged record is not read as a smaller one); a repeated top-level key is refused either way.
    @Test func subscriptionHeadersAreRecordsWithoutTheirItems() throws {
        var subscription = Self.refresh(Self.emptySubscription(), Self.three).subscription
        subscription.podcastGUID = "show"
        let data = SubscriptionRecord.encode(subscription)
        var header = try SubscriptionRecord.decode(data, path: "test", withItems: false)
        #expect(header.items.isEmpty && !subscription.items.isEmpty)
        header.items = subscription.items
        #expect(header == subscription)
        let text = String(decoding: data, as: UTF8.self)
        let broken = Data(text.replacingOccurrences(of: "\"items\":[", with: "\"items\":[{").utf8)
        #expect(throws: NewsstandError.self) { try SubscriptionRecord.decode(broken, path: "test", withItems: false) }
        let repeated = Data(text.replacingOccurrences(of: "{\"bodyDigest\"", with: "{\"name\":\"Other\",\"bodyDigest\"").utf8)
        #expect(repeated != data)
        let twoItemLists = Data(text.replacingOccurrences(of: "{\"bodyDigest\"", with: "{\"items\":[],\"bodyDigest\"").utf8)
        #expect(twoItemLists != data)
        for withItems in [true, false] {
            #expect(throws: NewsstandError.self) { try SubscriptionRecord.decode(repeated, path: "test", withItems: withItems) }
            #expect(throws: NewsstandError.self) { try SubscriptionRecord.decode(twoItemLists, path: "test", withItems: withItems) }
        }
    }

    /// The store's headers follow the files: a record replaced (renamed over) is read again, a deleted one
    /// is gone, and lookups by name and by podcast:guid load the whole record.
    @Test func subscriptionHeadersFollowTheirFiles() throws {
        try withTemporaryDirectorySync { root in
            let layout = LibraryLayout(root: root.path)
            try POSIX.makeDirectory(layout.catalog)
            let store = SubscriptionStore(layout: layout)
            var subscription = Self.refresh(Self.emptySubscription(), Self.three).subscription
            subscription.podcastGUID = "show"
            try store.save(subscription)
            #expect(try store.headers().map(\.name) == ["Loop"])
            #expect(try store.find("LOOP")?.items == subscription.items)
            #expect(try store.find(podcastGUID: "show")?.id == subscription.id)
            subscription.name = "Renamed"
            try store.save(subscription)
            #expect(try store.headers().map(\.name) == ["Renamed"])
            #expect(try store.find("Loop") == nil)
            #expect(throws: NewsstandError.self) { try store.checkUnique(name: "renamed", url: nil, except: nil) }
            try store.checkUnique(name: "renamed", url: nil, except: subscription.id)
            try store.delete(subscription.id)
            #expect(try store.headers().isEmpty)
            #expect(try store.find("Renamed") == nil)
        }
    }

    /// The channel's podcast:guid is stored with the subscription, once: the same value again writes nothing.
    @Test func podcastGUIDIsStoredWithTheSubscription() {
        var feed = Self.three
        feed.podcastGUID = "show-guid"
        let first = Self.refresh(Self.emptySubscription(), feed)
        #expect(first.subscription.podcastGUID == "show-guid")
        let again = Self.refresh(first.subscription, feed)
        #expect(!again.changed)
        // A feed that stops giving it does not erase what identifies the show.
        let without = Self.refresh(first.subscription, Self.three)
        #expect(!without.changed)
        #expect(without.subscription.podcastGUID == "show-guid")
    }

    // MARK: - A repeated id in one feed (issue 25)

    /// The first item wins the id; the later one with its own enclosure is told apart by it, and keeps its
    /// identity when the feed lists the two the other way round: no addition, no asset change.
    @Test func aRepeatedIdIsToldApartByEnclosureWhateverTheOrder() {
        let one = Self.item("same", "One", "2020-03-02", "http://cdn.example/1.mp3")
        let two = Self.item("same", "Two", "2020-03-01", "http://cdn.example/2.mp3")
        let first = Self.refresh(Self.emptySubscription(), Self.document([one, two]))
        #expect(first.additions.map(\.item.title) == ["One", "Two"])
        #expect(first.duplicateNotes.count == 1)
        #expect(first.subscription.items.map { FeedIdentity.feedID($0.id) } == ["same", "same"])
        #expect(Set(first.subscription.items.map(\.id)).count == 2)
        for order in [[one, two], [two, one]] {
            let again = Self.refresh(first.subscription, Self.document(order))
            #expect(again.additions.isEmpty)
            #expect(again.issueUpdates.isEmpty)
            #expect(!again.changed)
        }
    }

    /// A store written before the fix holds two items with one id: the first keeps its issue and URL.
    @Test func aStoreWithTwoItemsOfOneIdKeepsTheFirstsIssue() {
        var damaged = Self.emptySubscription()
        damaged.items = [
            SubscriptionItem(
                id: "same", enclosure: "http://cdn.example/1.mp3", issueName: "One",
                assetURLs: ["http://cdn.example/1.mp3"], firstSeen: Self.today),
            SubscriptionItem(
                id: "same", enclosure: "http://cdn.example/2.mp3", issueName: "Two",
                assetURLs: ["http://cdn.example/2.mp3"], firstSeen: Self.today),
        ]
        let merge = Self.refresh(
            damaged, Self.document([Self.item("same", "One", "2020-03-02", "http://cdn.example/1.mp3")]))
        #expect(merge.additions.isEmpty)
        #expect(merge.issueUpdates.isEmpty)
    }

    // MARK: - Podcasting 2.0 transcripts and chapters (issue 25)

    static func episode(_ id: String, transcript: String?, chapters: String?) -> FeedItem {
        var item = item(id, "Episode \(id)", "2026-11-20", "http://cdn.example/\(id).mp3")
        item.extras = [transcript, chapters].compactMap { $0.flatMap { URL(string: $0) } }.map {
            FeedAsset(url: $0, unpack: false)
        }
        return item
    }

    /// Each item's transcript and chapters go with its own issue, never unpacked; a re-sync of the same feed
    /// (or one that re-signs the transcript's query) adds nothing and attaches nothing again.
    @Test func transcriptsAndChaptersAttachToTheirItemAndStayStable() throws {
        let feed = Self.document([
            Self.episode("a", transcript: "http://cdn.example/a.json", chapters: "http://cdn.example/a.chapters.json"),
            Self.episode("b", transcript: "http://cdn.example/b.srt?sig=1", chapters: nil),
            Self.episode("c", transcript: nil, chapters: nil),
        ])
        let first = Self.refresh(Self.emptySubscription(), feed)
        let files = first.additions.map { ($0.item.assets + $0.item.extras).map(\.url.absoluteString) }
        #expect(
            files == [
                ["http://cdn.example/a.mp3", "http://cdn.example/a.json", "http://cdn.example/a.chapters.json"],
                ["http://cdn.example/b.mp3", "http://cdn.example/b.srt?sig=1"], ["http://cdn.example/c.mp3"],
            ])
        #expect(first.additions.allSatisfy { $0.item.extras.allSatisfy { $0.unpack == false } })
        #expect(first.subscription.items.map(\.assetURLs) == files)

        let again = Self.refresh(first.subscription, feed)
        #expect(again.additions.isEmpty)
        #expect(again.issueUpdates.isEmpty)
        #expect(!again.changed)

        var resigned = feed
        resigned.items[1].extras[0].url = try #require(URL(string: "http://cdn.example/b.srt?sig=2"))
        let followed = Self.refresh(first.subscription, resigned)
        #expect(followed.additions.isEmpty)
        #expect(followed.issueUpdates.map(\.issueName) == ["Episode b"])
        #expect(followed.issueUpdates.allSatisfy { $0.newExtras.isEmpty })
    }

    /// A transcript published after the episode is attached to that episode's issue once, and only to it.
    @Test func aLateTranscriptIsAttachedOnceToItsIssue() throws {
        let before = Self.document([
            Self.episode("a", transcript: nil, chapters: nil), Self.episode("b", transcript: nil, chapters: nil),
        ])
        let first = Self.refresh(Self.emptySubscription(), before)
        var after = before
        after.items[1] = Self.episode("b", transcript: "http://cdn.example/b.vtt", chapters: nil)
        let late = Self.refresh(first.subscription, after)
        #expect(late.additions.isEmpty)
        #expect(late.issueUpdates.map(\.issueName) == ["Episode b"])
        #expect(late.issueUpdates.first?.newExtras.map(\.url.absoluteString) == ["http://cdn.example/b.vtt"])

        // The commit's half: attached once, unpack off, and not again when the same update comes twice.
        var issue = Issue(name: "Episode b", date: Self.today, folderName: "Episode b")
        issue.assets = [AssetRequest(url: try #require(URL(string: "http://cdn.example/b.mp3"))).makeAsset(id: "m")]
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let layout = LibraryLayout(root: root.path)
        let extras = late.issueUpdates.first?.newExtras ?? []
        try Library.attach(extras, to: &issue, layout: layout)
        try Library.attach(extras, to: &issue, layout: layout)
        #expect(issue.assets.map(\.url.absoluteString) == ["http://cdn.example/b.mp3", "http://cdn.example/b.vtt"])
        #expect(issue.assets.last?.unpack == false)

        let settled = Self.refresh(late.subscription, after)
        #expect(settled.issueUpdates.isEmpty)
        #expect(!settled.changed)
    }

    // MARK: - Several renditions and the subscription's media policy (issue 25)

    static func renditions() -> FeedItem {
        var item = item("r", "Renditions", "2026-11-20", "http://cdn.example/r.mp3?sig=1")
        func variant(_ url: String, _ type: String, _ length: Int64?) -> FeedAsset? {
            URL(string: url).map { FeedAsset(url: $0, length: length, mimeType: type) }
        }
        item.variants = [
            variant("http://cdn.example/r.mp3?sig=1", "audio/mpeg", 50_000_000),
            variant("http://cdn.example/r.opus", "audio/opus", 20_000_000),
            variant("http://cdn.example/r.mp4", "video/mp4", 900_000_000),
            variant("http://cdn.example/r.ogg", "audio/ogg", nil),
        ].compactMap { $0 }
        return item
    }

    @Test(arguments: [
        (nil, nil, ["http://cdn.example/r.mp3?sig=1"]),  // the default: the item's own assets, as before
        ("audio/opus", nil, ["http://cdn.example/r.opus"]),
        ("AUDIO/OPUS; codecs=opus", nil, ["http://cdn.example/r.opus"]),
        ("video/", nil, ["http://cdn.example/r.mp4"]),
        ("video/*", 100_000_000, ["http://cdn.example/r.mp3?sig=1"]),  // too large: the first that fits
        (nil, 30_000_000, ["http://cdn.example/r.opus"]),
        ("audio/ogg", 1, ["http://cdn.example/r.ogg"]),  // an unknown length is not skipped
        ("audio/flac", nil, ["http://cdn.example/r.mp3?sig=1"]),  // no such type: the first
    ] as [(String?, Int64?, [String])])
    func mediaPolicyChoosesOneRendition(prefer: String?, maxBytes: Int64?, expected: [String]) {
        let policy = MediaPolicy(preferredType: prefer, maxBytes: maxBytes)
        #expect(policy.assets(for: Self.renditions()).map(\.url.absoluteString) == expected)
    }

    @Test func mediaPolicyTakesNothingWhenNothingFitsAndRefusesNonTypes() {
        var item = Self.renditions()
        item.variants.removeLast()  // the one of unknown length
        #expect(MediaPolicy(maxBytes: 1000).assets(for: item).isEmpty)
        for text in ["", "opus", "audio opus/x", "*/*", "/opus"] { #expect(MediaPolicy.normalized(text) == nil, "\(text)") }
        #expect(MediaPolicy.normalized("Audio/*") == "audio/")
    }

    /// The chosen rendition becomes the issue's only media; a re-sync (even one that re-signs it) changes no
    /// choice, and a later change of policy never moves a known item to another copy of the same media.
    @Test func aSubscriptionsPolicyChoosesAndStaysChosen() throws {
        var subscription = Self.emptySubscription()
        subscription.mediaPolicy = MediaPolicy(preferredType: "audio/opus")
        let feed = Self.document([Self.renditions()])
        let first = Self.refresh(subscription, feed)
        #expect(first.additions.map { $0.item.assets.map(\.url.absoluteString) } == [["http://cdn.example/r.opus"]])
        #expect(first.subscription.items.first?.assetURLs == ["http://cdn.example/r.opus"])
        // Identity still comes from the feed's first enclosure, whatever the policy.
        #expect(first.subscription.items.first?.enclosure == "http://cdn.example/r.mp3")

        let again = Self.refresh(first.subscription, feed)
        #expect(again.additions.isEmpty && again.issueUpdates.isEmpty && !again.changed)

        var changedPolicy = first.subscription
        changedPolicy.mediaPolicy = MediaPolicy(preferredType: "video/")
        let after = Self.refresh(changedPolicy, feed)
        #expect(after.additions.isEmpty && after.issueUpdates.isEmpty && !after.changed)

        var resigned = feed
        resigned.items[0].variants[1].url = try #require(URL(string: "http://cdn.example/r.opus?sig=2"))
        let followed = Self.refresh(first.subscription, resigned)
        #expect(followed.issueUpdates.first?.assets?.map(\.url.absoluteString) == ["http://cdn.example/r.opus?sig=2"])
    }
}
