/// What `issues list` shows of an issue, read from the catalog's index without opening the issue's
/// record: cheap enough to list 100,000 issues.
public struct IssueSummary: Sendable, Hashable {
    /// The unique name.
    public let name: String
    /// The cover date.
    public let date: IssueDate
    /// The issue's status.
    public let status: Issue.Status
    /// Assets that need nothing more (downloaded and placed, or unpacked).
    public let assetsDone: Int
    /// All assets.
    public let assetsTotal: Int
    /// Bytes received over all assets (saturating: never wraps).
    public let bytes: Int64
    /// The content folder's name inside the library.
    public let folderName: String
    /// True while a `remove` of the issue is under way.
    public let isBeingRemoved: Bool
    /// A pinned issue is never pruned. Index lines written before pins existed read as unpinned.
    public let isPinned: Bool

    package init(_ issue: Issue) {
        name = issue.name
        date = issue.date
        status = issue.status
        assetsDone = issue.assets.lazy.filter(\.isComplete).count
        assetsTotal = issue.assets.count
        bytes = issue.assets.reduce(Int64(0)) { $0.saturatingAdd($1.receivedBytes) }
        folderName = issue.folderName
        isBeingRemoved = issue.isBeingRemoved
        isPinned = issue.isPinned
    }

    package init(
        name: String, date: IssueDate, status: Issue.Status, assetsDone: Int, assetsTotal: Int, bytes: Int64,
        folderName: String, isBeingRemoved: Bool, isPinned: Bool = false
    ) {
        self.name = name
        self.date = date
        self.status = status
        self.assetsDone = assetsDone
        self.assetsTotal = assetsTotal
        self.bytes = bytes
        self.folderName = folderName
        self.isBeingRemoved = isBeingRemoved
        self.isPinned = isPinned
    }
}

extension Int64 {
    /// `self + other`, clamped to the representable range instead of trapping: sizes come from outside.
    package func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
