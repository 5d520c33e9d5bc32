/// Which issues ``Library/prune(_:dryRun:)`` removes. The rules combine: an issue goes when *any* rule
/// picks it. A pinned issue, an issue being downloaded or unpacked (in any process), and an issue
/// whose removal is already under way are never picked.
///
/// - ``keep``: in each group, the N newest issues stay (by date, then name); the others go. A group is
///   the issue's subscription when it came from one, else its publication (``Issue/publicationName``).
///   Pinned and in-flight issues count among the N they rank in.
/// - ``olderThanDays``: issues dated more than this many days before ``today`` go.
/// - ``maxBytes``: after the rules above, the oldest remaining issues go (by date, then name) until the
///   issues in scope take at most this many bytes on disk, or only protected issues are left.
public struct PrunePolicy: Sendable, Hashable {
    /// How many issues each publication or subscription keeps; nil for no such rule.
    public var keep: Int?
    /// Remove issues dated more than this many days before ``today``; nil for no such rule.
    public var olderThanDays: Int?
    /// The most bytes the issues in scope may take; nil for no such rule.
    public var maxBytes: Int64?
    /// Limits the policy to the issues of one subscription (what `sync` applies for a subscription's
    /// own `--keep`); nil for the whole library.
    public var subscriptionID: String?
    /// The day ``olderThanDays`` counts back from (today, in the local time zone, unless set).
    public var today: IssueDate

    /// Creates a policy.
    /// - Parameters:
    ///   - keep: The newest issues to keep per publication or subscription.
    ///   - olderThanDays: The age in days past which issues go.
    ///   - maxBytes: The byte budget, oldest issues removed first.
    ///   - subscriptionID: Only the issues of this subscription, when given.
    ///   - today: The day ages are counted from.
    public init(
        keep: Int? = nil, olderThanDays: Int? = nil, maxBytes: Int64? = nil, subscriptionID: String? = nil,
        today: IssueDate = .today()
    ) {
        self.keep = keep
        self.olderThanDays = olderThanDays
        self.maxBytes = maxBytes
        self.subscriptionID = subscriptionID
        self.today = today
    }

    /// True when the policy has no rule, so nothing can be pruned.
    public var isEmpty: Bool { keep == nil && olderThanDays == nil && maxBytes == nil }
}

/// What a prune removed (or, in a dry run, would remove), and what it had to spare.
public struct PruneReport: Sendable, Hashable {
    /// Why an issue was picked.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// More than `keep` newer issues in its group.
        case keep
        /// Dated before the `olderThanDays` cut-off.
        case olderThan = "older-than"
        /// Among the oldest while the library was over `maxBytes`.
        case maxBytes = "max-bytes"
    }

    /// Why a picked issue was spared.
    public enum Protection: String, Sendable, Hashable, CaseIterable {
        /// The issue is pinned.
        case pinned
        /// A download or unpack of one of its assets is in flight (here or in another process).
        case inFlight = "in-flight"
    }

    /// One issue removed.
    public struct Removal: Sendable, Hashable {
        public let name: String
        public let date: IssueDate
        /// The group `keep` counted it in: `subscription ID` or the publication's name.
        public let group: String
        /// Bytes it took on disk (content folder, partial and finished downloads, staging), all freed.
        public let bytes: Int64
        public let reasons: [Reason]
        /// The subscription item it came from, for `sync` to remember as seen; nil for a hand-added issue.
        public let origin: Issue.Origin?

        package init(name: String, date: NewsstandCore.IssueDate, group: String, bytes: Int64, reasons: [NewsstandCore.PruneReport.Reason], origin: NewsstandCore.Issue.Origin?) {
            self.name = name
            self.date = date
            self.group = group
            self.bytes = bytes
            self.reasons = reasons
            self.origin = origin
        }
    }

    /// One issue a rule picked but that was spared.
    public struct Spared: Sendable, Hashable {
        public let name: String
        public let date: IssueDate
        public let protection: Protection
        public let reasons: [Reason]

        package init(name: String, date: NewsstandCore.IssueDate, protection: NewsstandCore.PruneReport.Protection, reasons: [NewsstandCore.PruneReport.Reason]) {
            self.name = name
            self.date = date
            self.protection = protection
            self.reasons = reasons
        }
    }

    /// Whether nothing was removed because this was a dry run.
    public package(set) var dryRun: Bool
    /// The issues removed (or that would be), oldest first.
    public package(set) var removed: [Removal] = []
    /// The issues a rule picked but that are protected.
    public package(set) var spared: [Spared] = []
    /// The sum of ``Removal/bytes``: exactly what the removal frees.
    public var bytesFreed: Int64 { removed.reduce(Int64(0)) { $0.saturatingAdd($1.bytes) } }
    /// Bytes the issues in scope took before, and take after the removal.
    public package(set) var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 { bytesBefore - bytesFreed }
    /// True when `maxBytes` was given and could not be met without touching protected issues.
    public package(set) var overBudget = false

    package init(dryRun: Bool, removed: [NewsstandCore.PruneReport.Removal] = [], spared: [NewsstandCore.PruneReport.Spared] = [], bytesBefore: Int64 = 0, overBudget: Bool = false) {
        self.dryRun = dryRun
        self.removed = removed
        self.spared = spared
        self.bytesBefore = bytesBefore
        self.overBudget = overBudget
    }
}
