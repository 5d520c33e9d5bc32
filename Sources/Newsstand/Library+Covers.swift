import Foundation
import Logging
import NewsstandArchive
import NewsstandCatalog
import NewsstandCore
import NewsstandDownload

/// Covers and the issue sidecar (`issue.json`): which files a cover may come from, making it through the
/// configured ``CoverMaking`` under the issue's lock, and writing the sidecar whenever the issue changes.
extension Library {
    /// Image extensions a cover may be taken from, in an unpacked archive or as the feed's image.
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "webp", "gif"]

    /// What `issue`'s cover may be made from, best first: the feed's image (a downloaded asset with the role
    /// `cover`), then each content asset in order: an unpacked EPUB's folder, the first image of an unpacked
    /// archive (`cbz` when its URL says so, else `zip`), a kept archive, a PDF.
    public nonisolated func coverCandidates(for issue: Issue) -> [CoverCandidate] {
        let folder = layout.contentFolder(issue.folderName)
        var feed: [CoverCandidate] = []
        var content: [CoverCandidate] = []
        for asset in issue.assets where asset.isComplete {
            let url = asset.url.lastPathComponent.lowercased()
            if asset.state == .unpacked {
                // A damaged or missing record (unpacked before records existed) gives no candidate: it is verify's
                // to report, and the next source serves.
                guard let record = try? ContentRecord.read(assetID: asset.id, layout: layout) else { continue }
                let files = record.entries.filter { $0.kind == .file }.map(\.path)
                if let container = files.first(where: { $0 == "META-INF/container.xml" || $0.hasSuffix("/META-INF/container.xml") }) {
                    let root = String(container.dropLast("META-INF/container.xml".count))
                    content.append(.epubFolder(root.isEmpty ? folder : "\(folder)/\(root.dropLast())"))
                } else if let first = files.filter({ Library.isImage($0) && !Library.isHidden($0) }).sorted(by: Library.nameOrder).first {
                    content.append(.image(path: "\(folder)/\(first)", source: url.hasSuffix(".cbz") ? .cbz : .zip))
                }
                continue
            }
            guard let name = asset.fileName else { continue }
            let path = "\(folder)/\(name)"
            let ext = (name as NSString).pathExtension.lowercased()
            if asset.role == .cover {
                feed.append(.image(path: path, source: .feed))
            } else if ext == "pdf" {
                content.append(.pdf(path: path))
            } else if asset.isArchive == true || ["epub", "cbz", "zip"].contains(ext) {
                content.append(.archive(path: path))
            } else if Library.imageExtensions.contains(ext) {
                content.append(.image(path: path, source: .image))
            }
        }
        return feed + content
    }

    static func isImage(_ path: String) -> Bool {
        imageExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// macOS's `__MACOSX/` and dot files are not pages.
    static func isHidden(_ path: String) -> Bool {
        path.split(separator: "/").contains { $0.hasPrefix(".") || $0 == "__MACOSX" }
    }

    /// Name order as a comic reader pages: by path, numbers compared by value (`2.jpg` before `10.jpg`).
    static func nameOrder(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: [.numeric, .caseInsensitive]) == .orderedAscending
    }

    /// The cover's names in `issue`'s folder: the standard ones, unless the issue's content holds one of them
    /// (a placed file of that name, or an unpacked archive's entry): then `issue-cover…`, so that the content
    /// is never overwritten.
    public nonisolated func coverNames(for issue: Issue) -> CoverNames {
        var taken = Set<String>()
        for asset in issue.assets {
            if let name = asset.fileName { taken.insert(name) }
            // Without its record (damaged, or unpacked before records existed) the folder itself is asked.
            if asset.state == .unpacked, let record = try? ContentRecord.read(assetID: asset.id, layout: layout) {
                taken.formUnion(record.entries.map(\.path))
            } else if asset.state == .unpacked {
                let folder = layout.contentFolder(issue.folderName)
                let ours = Library.readSidecar(folder, name: issue.sidecarName)?.cover?.files ?? []
                taken.formUnion(CoverNames.standard.all.filter { POSIX.exists("\(folder)/\($0)") && !ours.contains($0) })
            }
        }
        return CoverNames.standard.all.contains(where: taken.contains) ? .clashing : .standard
    }

    /// The cover `issue` has now: the sidecar's, when its files are all there; nil otherwise.
    public nonisolated func cover(of issue: Issue) -> CoverReport? {
        let folder = layout.contentFolder(issue.folderName)
        guard let cover = Library.readSidecar(folder, name: issue.sidecarName)?.cover else { return nil }
        return cover.files.allSatisfy({ POSIX.exists("\(folder)/\($0)") }) ? cover : nil
    }

    /// The library's sidecar in `folder`, or nil when there is none (or the file there is not the library's).
    /// Makes (or, with `refresh`, remakes) the covers of the named issues (all when nil) that are available,
    /// with `maker`; an issue that has a complete cover is left alone unless `refresh`. Each issue's sidecar
    /// is rewritten with its cover.
    /// - Returns: Each issue's name and cover, or the error that stopped it, in the order given.
    /// - Throws: `.issueNotFound` for a name that is not an issue, before anything is made.
    public func makeCovers(issues names: [String]? = nil, refresh: Bool = false, maker: any CoverMaking) async throws
        -> [(name: String, result: Result<CoverReport, NewsstandError>)]
    {
        var issues: [Issue] = []
        if let names {
            for name in names { issues.append(try await existingIssue(named: name)) }
        } else {
            issues = try await self.issues(status: .available).filter { !$0.isBeingRemoved }
        }
        var outcomes: [(name: String, result: Result<CoverReport, NewsstandError>)] = []
        // A filed issue shares its folder: a cover.jpg there would be every issue's (not made; see the README).
        for issue in issues where issue.status == .available && !issue.isFiled {
            if !refresh, let cover = cover(of: issue) {
                outcomes.append((issue.name, .success(cover)))
                continue
            }
            do {
                outcomes.append((issue.name, .success(try await makeCover(of: issue, maker: maker))))
            } catch let error as NewsstandError {
                outcomes.append((issue.name, .failure(error)))
            } catch {
                outcomes.append((issue.name, .failure(NewsstandError(.io, "cannot make the cover of \(issue.name.debugDescription): \(error)", underlying: error))))
            }
        }
        return outcomes
    }

    /// Makes one issue's cover under its lock (``LibraryLayout/issueLock(_:)``: `remove` takes it too, so a
    /// removed issue's folder is never recreated), then rewrites its sidecar.
    func makeCover(of issue: Issue, maker: any CoverMaking) async throws -> CoverReport {
        let layout = self.layout
        let catalog = self.catalog
        let folder = layout.contentFolder(issue.folderName)
        let subscriptionName = try await subscriptionName(of: issue)
        let request = CoverRequest(
            issueName: issue.name, title: issue.source?.title ?? issue.name, date: issue.date,
            publication: issue.publication ?? subscriptionName ?? issue.publicationName, directory: folder,
            candidates: coverCandidates(for: issue), names: coverNames(for: issue))
        return try await runBlocking {
            let lock = try FileLock(path: layout.issueLock(issue.lockName))
            defer { withExtendedLifetime(lock) {} }
            guard let current = try catalog.issue(named: issue.name), !current.isBeingRemoved else {
                // Its removal deleted the lock file before committing; this lock may have made it again.
                try? POSIX.unlinkIfPresent(layout.issueLock(issue.lockName))
                throw NewsstandError.issueNotFound(issue.name, in: layout.root)
            }
            try POSIX.makeDirectory(folder)
            let cover = try maker.makeCover(request)
            // An earlier cover's files that this one does not replace (the source's format changed: cover.png
            // after cover.jpg). Only names of this issue's cover are touched: never the content's.
            if let old = Library.readSidecar(folder, name: issue.sidecarName)?.cover {
                for file in Set(old.files).subtracting(cover.files) where request.names.all.contains(file) {
                    try POSIX.unlinkIfPresent("\(folder)/\(file)")
                }
            }
            try Library.writeSidecar(current, subscriptionName: subscriptionName, cover: .some(cover), folder: folder, hashing: true)
            return cover
        }
    }

    /// The library's sidecar in `folder`, or nil when there is none (or the file there is not the library's).
    static func readSidecar(_ folder: String, name: String = IssueSidecar.fileName) -> IssueSidecar? {
        guard let data = try? AtomicFile.read("\(folder)/\(name)") else { return nil }
        return try? JSONDecoder().decode(IssueSidecar.self, from: data)
    }

    func subscriptionName(of issue: Issue) async throws -> String? {
        guard let origin = issue.origin else { return nil }
        return try await subscriptions().first { $0.id == origin.subscriptionID }?.name
    }

    /// Rewrites `issue`'s sidecar from the catalog's record, keeping its cover; does nothing while the issue has
    /// no folder (an issue not downloaded yet has nowhere to keep one).
    /// - Parameter name: The issue's name.
    public func writeSidecar(forIssueNamed name: String) async throws {
        guard let issue = try await issue(named: name), !issue.isBeingRemoved else { return }
        let folder = layout.contentFolder(issue.folderName)
        let subscriptionName = try await subscriptionName(of: issue)
        try await runBlocking {
            guard POSIX.exists(folder) else { return }
            try Library.writeSidecar(issue, subscriptionName: subscriptionName, cover: nil, folder: folder, hashing: true)
        }
    }

    /// Writes the sidecar in `folder` when its bytes change: atomically (a temporary file renamed over it).
    /// `cover` nil keeps the sidecar's cover as it is; `.some(nil)` drops it. An `issue.json` that is not the
    /// library's (the content's own) is never overwritten.
    static func writeSidecar(
        _ issue: Issue, subscriptionName: String?, cover: CoverReport??, folder: String, hashing: Bool
    ) throws {
        // A filed issue's is `<stem>.issue.json` beside its files (``Issue/sidecarName``).
        let path = "\(folder)/\(issue.sidecarName)"
        let existing = try AtomicFile.read(path)
        var previous: IssueSidecar?
        if let existing {
            previous = try? JSONDecoder().decode(IssueSidecar.self, from: existing)
            if previous == nil || issue.assets.contains(where: { $0.fileName == issue.sidecarName }) { return }
        }
        let sidecar = IssueSidecar(
            issue, subscriptionName: subscriptionName, cover: cover ?? previous?.cover, previous: previous, directory: folder,
            hashing: hashing)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        var data = try encoder.encode(sidecar)
        data.append(0x0A)
        if data != existing { try AtomicFile.write(data, to: path, durable: false) }
    }

    /// After a download run, when a ``Configuration/coverMaker`` is set: an issue that became available gets its
    /// cover, and each touched issue's sidecar is rewritten with its new files' digests (without a cover maker,
    /// `issues download --no-covers`, nothing more is done: the commit hook's sidecars stand, without new
    /// digests, so that a run costs what the engine costs). Failures are logged, never thrown: the downloads
    /// themselves succeeded.
    func afterRun(issueNames: Set<String>) async {
        guard configuration.coverMaker != nil else { return }
        for name in issueNames.sorted() where !Task.isCancelled {
            do {
                guard let issue = try await issue(named: name), !issue.isBeingRemoved else { continue }
                if let maker = configuration.coverMaker, issue.status == .available, !issue.isFiled,
                    cover(of: issue) == nil
                {
                    _ = try await makeCover(of: issue, maker: maker)
                } else {
                    try await writeSidecar(forIssueNamed: name)
                }
            } catch {
                logger.warning("cannot make the cover or sidecar of \(name.debugDescription): \(error)")
            }
        }
    }

    /// The catalog's hook that rewrites the sidecar of each changed issue that has a folder (one not downloaded
    /// yet has none, and an import of 100,000 issues must not make 100,000 folders). Runs inside the catalog's
    /// write, after the commit: a failure is logged, never thrown (the change itself is durable).
    static func sidecarWriter(_ layout: LibraryLayout, logger: Logger) -> @Sendable ([Issue]) -> Void {
        { issues in
            // An issue whose downloads are under way waits for the run's end (``afterRun(issueNames:)``): a run of
            // 200 assets would otherwise rewrite it after every group commit.
            for issue in issues where !issue.isBeingRemoved && !issue.assets.contains(where: { $0.state == .downloading }) {
                let folder = layout.contentFolder(issue.folderName)
                guard POSIX.exists(folder) else { continue }
                do {
                    // The subscription's name is the previous sidecar's (the catalog's write does not read the
                    // subscriptions); the library's own rewrites after a run fill it in.
                    let previous = readSidecar(folder, name: issue.sidecarName)?.subscription
                    let name = previous?.id == issue.origin?.subscriptionID ? previous?.name : nil
                    try writeSidecar(issue, subscriptionName: name, cover: nil, folder: folder, hashing: false)
                } catch {
                    logger.warning("cannot write the sidecar of \(issue.name.debugDescription): \(error)")
                }
            }
        }
    }

    /// `verify`'s check of covers: each available issue (of `names`, all when nil) whose sidecar names a cover
    /// whose files are missing or that `maker` finds damaged. With `repair` each such issue's cover is made again.
    /// - Returns: One problem per issue, marked repaired when its cover was remade.
    public func verifyCovers(issues names: [String]?, repair: Bool, maker: any CoverMaking) async throws -> [VerifyReport.Problem] {
        var problems: [VerifyReport.Problem] = []
        let selected = names.map(Set.init)
        for issue in try await issues(status: .available) where !issue.isBeingRemoved {
            guard selected?.contains(issue.name) ?? true else { continue }
            let folder = layout.contentFolder(issue.folderName)
            // Only a cover the sidecar names is checked: an issue that never had one (a library older than covers,
            // downloads with --no-covers) is not damaged; `issues covers` makes it.
            guard let cover = Library.readSidecar(folder, name: issue.sidecarName)?.cover else { continue }
            let detail: String? = await Task.detached {
                cover.files.lazy.compactMap { maker.problem(withCoverAt: "\(folder)/\($0)") }.first
            }.value
            guard let detail else { continue }
            var repaired = false
            if repair {
                repaired = (try? await makeCover(of: issue, maker: maker)) != nil
            }
            problems.append(VerifyReport.Problem(kind: .missingCover, path: folder, detail: detail, repaired: repaired))
        }
        return problems
    }
}
