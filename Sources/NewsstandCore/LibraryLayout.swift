import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where each thing lives inside a library folder. Internal folders start with a dot, and issue
/// folder names never do, so the two can never collide.
///
/// ```
/// library.json                 {"version": 4, …}: the format marker (version 1 held everything; 2 and 3 kept the
///                              catalog in JSON-lines files, upgraded to the database when first opened)
/// .catalog/catalog.sqlite      the catalog (SQLite, WAL): each issue's JSON record, the saved download list,
///                              the event log (with -wal and -shm beside it while it is open)
/// .catalog/hooks/<name>.json   how far each hook has acknowledged the event log (and its retry state)
/// .catalog/subscriptions/<id>.json one subscription: its feed, options, validators and the items seen
/// .sync/<id>.json              when a subscription was last checked and the outcome (not catalog)
/// .catalog/content/<asset id>.json  what an unpacked asset placed (paths, sizes): for `verify`
/// .downloads/ .staging/ .trash/ partial downloads, extraction folders, removed folders on their way out
/// .downloads/asset-locks       one byte locked per asset in flight (never deleted)
/// .downloads/.spare-record-<n> an emptied resume record, renamed into place for a later download
/// .credentials.json           passwords taken out of URLs and feed headers, mode 0600 (CredentialStore)
/// config.json                  the library's settings (the CLI's defaults, "hooks"); never an issue folder's name
/// <issue folder>/              one content folder per issue, or, for issues filed by a layout template, folders
///                              they share (`Podcast/2026-11-20 Title.mp3`, its sidecar `… Title.issue.json`)
/// ```
package struct LibraryLayout: Sendable, Hashable {
    package let root: String

    /// The format marker (version 4), or a whole version-1 catalog waiting to be upgraded.
    package var manifest: String { root + "/library.json" }
    /// Left by the upgrades of earlier versions; deleted when found.
    package var manifestBackup: String { root + "/library.json.v1" }
    package var lockFile: String { root + "/.lock" }

    // MARK: Catalog

    package var catalog: String { root + "/.catalog" }
    /// Where an upgrade builds the new catalog before moving it into place.
    package var catalogUpgrade: String { root + "/.catalog-upgrade" }
    /// The catalog's database (``Catalog``).
    package var database: String { catalog + "/catalog.sqlite" }
    /// Versions 2 and 3 only, read by the upgrade: the bucket folder of depth `digits`, the saved list's
    /// markers, and the event log.
    package func records(digits: Int) -> String { "\(catalog)/issues-\(digits)" }
    package var pending: String { catalog + "/pending" }
    package var legacyEvents: String { catalog + "/events.jsonl" }
    /// Each hook's position in the event log (its last acknowledged cursor), and the lock its deliverer holds.
    package var hookPositions: String { catalog + "/hooks" }
    /// There while the library's file system is under the low-space threshold: made by the process that
    /// announces `library.low-space` (so only one does), removed once the space is back.
    package var lowSpaceMark: String { catalog + "/low-space" }
    package func hookPosition(_ name: String) -> String { "\(hookPositions)/\(name).json" }
    package func hookLock(_ name: String) -> String { "\(hookPositions)/\(name).lock" }
    /// What each unpacked asset placed (paths and sizes), written once per placement, for `verify`.
    package var contentRecords: String { catalog + "/content" }
    package func contentRecord(_ assetID: String) -> String { "\(contentRecords)/\(assetID).json" }

    // MARK: Subscriptions

    package var subscriptions: String { catalog + "/subscriptions" }
    package func subscription(_ id: String) -> String { "\(subscriptions)/\(id).json" }
    /// Last-checked times and outcomes: rewritten by every `sync`, so kept out of the catalog.
    package var syncStatus: String { root + "/.sync" }
    package func syncStatus(_ id: String) -> String { "\(syncStatus)/\(id).json" }
    /// Held by the one service (`issues serve`) running on the library, with its PID beside it.
    package var serviceLock: String { syncStatus + "/service.lock" }
    package var servicePID: String { syncStatus + "/service.pid" }

    // MARK: Downloads

    /// Partial and completed downloads with their resume records.
    package var downloads: String { root + "/.downloads" }
    /// One extraction folder per asset being unpacked.
    package var staging: String { root + "/.staging" }
    /// Content folders of removed issues on their way out.
    package var trash: String { root + "/.trash" }

    package func partialFile(_ id: String) -> String { "\(downloads)/\(id).part" }
    package func resumeRecord(_ id: String) -> String { "\(downloads)/\(id).resume.json" }
    package func completedFile(_ id: String) -> String { "\(downloads)/\(id).done" }
    /// One byte per asset, locked by the process downloading, placing or removing it (``AssetLock``).
    package var assetLocks: String { "\(downloads)/asset-locks" }
    /// Emptied resume records kept to be renamed into place for the next downloads (`RecordSpares`).
    package static let recordSparePrefix = ".spare-record-"
    /// Whether a name in the download folder is shared by every asset (the lock file, a spare record)
    /// rather than one asset's file.
    package static func isSharedDownloadFile(_ name: String) -> Bool {
        name == "asset-locks" || name.hasPrefix(recordSparePrefix)
    }
    /// The lock file of one asset that earlier versions made (one per asset): deleted with the
    /// asset's other files when it is found.
    package func legacyAssetLock(_ id: String) -> String { "\(downloads)/\(id).lock" }
    package func stagingFolder(_ id: String) -> String { "\(staging)/\(id)" }
    package func contentFolder(_ folderName: String) -> String { "\(root)/\(folderName)" }
    /// Held while an issue's folder is filled (merge, placement) or removed.
    package func issueLock(_ folderName: String) -> String { "\(staging)/\(folderName).lock" }

    /// The library's secrets, readable by its owner only (``CredentialStore``).
    package var credentials: String { root + "/.credentials.json" }
    /// The library's own settings file.
    package var config: String { root + "/config.json" }
    /// The largest settings file read (the library's or the user's; the CLI and the hooks read the same file): a
    /// few KiB in use, so a larger one is a mistake or an attack, refused before a buffer of its size is made.
    package static let maximumConfigBytes: Int64 = 4 << 20
    /// Which issues were opened (NewsstandKit's "new" badge cleared): a set of names beside the catalog, so
    /// that issue records keep their format (``ReadStateStore``).
    package var readState: String { root + "/.read-state.json" }
    /// The access token of `issues serve` on a non-loopback address (0600).
    package var serveToken: String { root + "/.serve-token" }

    /// Names of the library's own top-level files that new issue folders do not take and `verify` does not
    /// call orphans. Kept apart from ``isReserved(_:)``, which also refuses records: an issue folder that
    /// took one of these names before they were the library's stays readable.
    package static func isLibraryFile(_ component: String) -> Bool {
        component.lowercased() == "config.json"
    }

    /// Names a top-level entry may not take because the library itself uses them.
    package static func isReserved(_ component: String) -> Bool {
        component.lowercased().hasPrefix("library.json")
    }

    package init(root: String) {
        self.root = root
    }

    // MARK: Files of an issue's folder the library writes besides the content

    /// The sidecar (`issue.json`, what the issue is) and the cover files: `cover.<ext>` (`jpg`, `png`, `webp`,
    /// `gif`), `cover-256.jpg`, `cover-1024.jpg`, or the same under `issue-cover` when the content holds one of
    /// those names. `verify` counts them as the library's, not orphans; the cover maker never writes over the
    /// content's own files of these names.
    package static let issueSidecar = "issue.json"
    package static func coverFiles(base: String, widths: [Int] = [256, 1024]) -> [String] {
        ["jpg", "png", "webp", "gif"].map { "\(base).\($0)" } + widths.map { "\(base)-\($0).jpg" }
    }
    package static let issueFiles: Set<String> =
        Set([issueSidecar] + coverFiles(base: "cover") + coverFiles(base: "issue-cover"))

    // MARK: Temporary names

    /// The one name rule for a file written beside `path` and renamed onto it: `.NAME.tmp-PID-RANDOM` in the
    /// same folder (hidden, never a record's or a user's name, and unique to the writer). What ``isTemporary(_:)``
    /// recognises, so that `verify` and the sweeps find every one a killed writer left.
    package static func temporary(beside path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        return "\(folder)/.\(name)\(temporaryMark)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Whether a folder entry's name is a temporary of ``temporary(beside:)`` (of `base`, when given). Without
    /// a base any name holding the mark counts, hidden or not: the index was written as `index.jsonl.tmp-PID`
    /// before this rule, and a killed writer of that version may have left one.
    package static func isTemporary(_ name: String, of base: String? = nil) -> Bool {
        guard let base else { return name.contains(temporaryMark) }
        return name.hasPrefix(".\(base)\(temporaryMark)")
    }

    /// The PID a temporary's name gives its writer (`.NAME.tmp-PID-RANDOM`), or nil for another name.
    package static func temporaryWriter(_ name: String) -> pid_t? {
        guard let mark = name.range(of: temporaryMark, options: .backwards) else { return nil }
        return pid_t(name[mark.upperBound...].prefix { $0 != "-" })
    }

    private static let temporaryMark = ".tmp-"
}
