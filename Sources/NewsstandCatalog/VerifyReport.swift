import Foundation

/// What `verify` found, one entry per problem.
public struct VerifyReport: Sendable {
    /// One thing out of order.
    public struct Problem: Sendable, Hashable {
        /// The kinds of damage `verify` knows.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// The database's own check failed (a damaged index is rebuilt), or a row's columns say other than
            /// its JSON record (a record edited by hand): the columns are written again from the record.
            case indexOutOfStep
            /// The catalog's database is missing or damaged past what `REINDEX` mends: moved aside and rebuilt
            /// from the issues' `issue.json` manifests (by `verify --repair`, before the library opens).
            case damagedCatalog
            /// A saved download points to an issue or asset that is gone or complete: dropped.
            case stalePendingDownload
            /// Two issues claim one folder name (compared case-folded): listed for a person to resolve.
            case staleFolderClaim
            /// A temporary file a killed writer left in the catalog: deleted.
            case staleTemporaryFile
            /// An issue's content folder, or files an asset placed in it, are gone although the issue
            /// says they are there: the assets concerned are queued to be fetched again.
            case missingContent
            /// A file an asset placed changed size (or, with the deep check, its SHA-256): the asset is
            /// queued to be fetched again (a changed plain file is deleted first, so the new copy takes
            /// its name).
            case changedContent
            /// A `remove` (or a prune) was cut short: the repair finishes it.
            case interruptedRemoval
            /// A file of the library's own that nothing uses any more: a partial or finished download,
            /// a resume record or a lock file of no download, a staging folder of no unpack, a content
            /// record of no asset, a folder left in the trash: deleted.
            case staleFile
            /// A folder or file in the library that no issue owns: listed; deleted only with
            /// `removeOrphans`.
            case orphan
            /// A cover file the sidecar names is missing or damaged: remade by a repair (when the program that
            /// verifies makes covers, as `issues` does).
            case missingCover
            /// A subscription's record cannot be read: listed, never rewritten (it holds the items seen).
            /// `sync` reports it as a failed subscription and refreshes the others; `subscriptions` stops
            /// with an error naming it until it is fixed or removed.
            case damagedSubscription
        }

        public let kind: Kind
        /// The file or folder concerned.
        public let path: String
        /// One line saying what is wrong.
        public let detail: String
        /// Whether `verify --repair` fixed it.
        public package(set) var repaired: Bool

        package init(kind: Kind, path: String, detail: String, repaired: Bool) {
            self.kind = kind
            self.path = path
            self.detail = detail
            self.repaired = repaired
        }
    }

    public package(set) var problems: [Problem] = []
    /// Issues whose records were read.
    public package(set) var issuesChecked = 0
    /// Issues whose content was checked against what their assets placed.
    public package(set) var contentChecked = 0
    /// Issues whose content was not checked because a download or unpack of theirs is in flight.
    public package(set) var skippedInFlight: [String] = []

    /// True when nothing is left wrong (everything found was repaired, or nothing was found).
    public var isClean: Bool { problems.allSatisfy(\.repaired) }
}

/// How ``Library/verify(issues:options:)`` checks and what it may change.
public struct VerifyOptions: Sendable, Hashable {
    /// Fix what the library owns: re-derive or rebuild the index, drop stale entries, delete the
    /// library's own stale files, finish interrupted removals, re-queue assets whose content is gone or
    /// changed.
    public var repair: Bool
    /// Delete orphans (files and folders no issue owns): the only way `verify` deletes a file it did
    /// not write. Implies nothing else.
    public var removeOrphans: Bool
    /// Also hash every placed file whose SHA-256 is known, and compare (reads all of them).
    public var deep: Bool

    public init(repair: Bool = false, removeOrphans: Bool = false, deep: Bool = false) {
        self.repair = repair
        self.removeOrphans = removeOrphans
        self.deep = deep
    }
}
