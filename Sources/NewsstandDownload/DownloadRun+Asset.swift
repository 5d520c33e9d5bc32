import Foundation
import Synchronization
import NewsstandCore
import NewsstandArchive
import NewsstandCatalog

/// One asset's steps in a run: admitted under a network slot, fetched, flushed, placed or unpacked,
/// committed, or failed.
extension DownloadRun {
    /// Where an asset stands when its network slot is given back: ended (skipped, removed, failed, or
    /// complete already), or on disk and locked, ready to be placed.
    private enum Admission: Sendable {
        case ended(Outcome)
        case ready(Ready)
    }

    private struct Ready: Sendable {
        var asset: AssetDownload
        var record: ResumeRecord?
        var fetched: Int64
        /// The bytes were fetched just now and are still in the partial file.
        var inPartialFile: Bool
        var lock: AssetLock
    }

    /// Takes one asset from wherever it stands to complete: fetch (or find the finished file from a
    /// run that crashed), verify, then place or unpack, committing each durable step.
    func process(_ item: WorkItem) async -> Outcome {
        let id = item.asset.id
        let onEvent = self.onEvent
        let emit: @Sendable (DownloadEvent.Kind) -> Void = { kind in
            onEvent(DownloadEvent(assetID: id, issueName: item.issueName, url: item.asset.url, kind: kind))
        }
        let layout = self.layout
        var fetched: Int64 = 0
        // Held until the outcome is recorded, a failure included: released earlier, another process could
        // lock, place and commit the asset, and this run's late failure would overwrite that.
        var held: AssetLock?
        defer { withExtendedLifetime(held) {} }
        do {
            // Locking, re-reading the issue and fetching share one of the `jobs` network slots: an asset
            // waiting for its turn holds no lock and has read nothing yet. Checked up front, the 200 assets of
            // one issue read (and decoded) that 200-asset issue 200 times before the first byte came in.
            let ready: Ready
            switch await network.withPermit({ await self.admit(item, emit: emit) }) {
            case .ended(let outcome): return outcome
            case .ready(let admitted): ready = admitted
            }
            held = ready.lock
            var asset = ready.asset
            let record = ready.record
            fetched = ready.fetched
            let completed = layout.completedFile(id)
            if ready.inPartialFile {
                let durable = syncDownloads
                let partialPath = layout.partialFile(id)
                try await finishing.withPermit {
                    // Flushed before it is renamed: a `.done` file is complete even after a power cut.
                    try await runBlocking {
                        if durable { try POSIX.fsyncFile(partialPath) }
                        try POSIX.rename(partialPath, completed)
                    }
                }
            }
            asset.receivedBytes = POSIX.fileSize(completed) ?? record?.expectedBytes ?? asset.receivedBytes
            asset.expectedBytes = record?.expectedBytes ?? asset.receivedBytes
            let placing = asset
            let final = try await finishing.withPermit {
                try await self.place(placing, item: item, record: record, emit: emit)
            }
            emit(.finished(final.located(in: layout.contentFolder(item.folderName))))
            return .finished(final, fetched: fetched)
        } catch {
            let outcome = await outcome(of: error, item, fetched: fetched, emit: emit)
            if case .removed = outcome, held != nil { await discardRemoved(id) }
            return outcome
        }
    }

    /// Deletes an asset's download files, staging folder and content record once its issue is found removed.
    /// Called holding the asset's lock: a removal in another process that found it held left them to us.
    private func discardRemoved(_ id: String) async {
        let layout = self.layout
        // Best effort: what is left is the next sweep's (or `verify --repair`'s) to delete.
        try? await runBlocking {
            for path in [
                layout.partialFile(id), layout.completedFile(id), layout.resumeRecord(id), layout.contentRecord(id),
            ] {
                try POSIX.unlinkIfPresent(path)
            }
            try TreeRemover.remove(layout.stagingFolder(id))
        }
    }

    /// Locks the asset, reads where it stands now, and fetches it unless its bytes are here already.
    /// Runs holding a network slot.
    private func admit(_ item: WorkItem, emit: @escaping @Sendable (DownloadEvent.Kind) -> Void) async -> Admission {
        // A run stopped while this asset waited for its slot: nothing of it is touched.
        if Task.isCancelled { return .ended(.interrupted) }
        let id = item.asset.id
        let layout = self.layout
        let lock: AssetLock?
        do {
            lock = try await runBlocking { try AssetLock.try(id, layout: layout) }
        } catch {
            return .ended(await fail(item, NewsstandError(.io, "cannot lock asset \(id): \(error)"), fetched: 0, emit: emit))
        }
        guard let lock else {
            emit(.skipped(reason: "another issues process is downloading it"))
            return .ended(.skipped)
        }
        do {
            return try await admit(item, locked: lock, emit: emit)
        } catch {
            // The lock is held until the failure is recorded (or a removal's leftovers are deleted).
            let outcome = await outcome(of: error, item, fetched: 0, emit: emit)
            if case .removed = outcome { await discardRemoved(id) }
            withExtendedLifetime(lock) {}
            return .ended(outcome)
        }
    }

    private func admit(
        _ item: WorkItem, locked lock: AssetLock, emit: @escaping @Sendable (DownloadEvent.Kind) -> Void
    ) async throws -> Admission {
        let id = item.asset.id
        let layout = self.layout
        // Another process may have finished (or removed) it between our selection and our lock.
        let catalog = self.catalog
        let standing = try await runBlocking { try catalog.assetStanding(id, ofIssueNamed: item.issueName) }
        guard let standing, !standing.isBeingRemoved else {
            await discardRemoved(id)
            return .ended(.removed)
        }
        var asset = standing.asset
        if asset.isComplete {
            emit(.finished(asset.located(in: layout.contentFolder(item.folderName))))
            return .ended(.finished(asset, fetched: 0))
        }
        let completed = layout.completedFile(id)
        var record = ResumeRecord.load(layout.resumeRecord(id))
        // A finished file left by an earlier run may have been cut short on disk since, or replaced by a
        // link: checked again before it is trusted, else fetched again from zero.
        let expected = record?.expectedBytes
        let sha256 = asset.sha256
        if POSIX.exists(completed),
            !(try await runBlocking { AssetPlacer.isIntact(completed, expectedBytes: expected, sha256: sha256) })
        {
            try await runBlocking {
                try POSIX.unlinkIfPresent(completed)
                try POSIX.unlinkIfPresent(layout.resumeRecord(id))
            }
            record = nil
        }
        guard !POSIX.exists(completed), !placer.alreadyPlaced(record, id: id, folder: item.folderName) else {
            return .ready(Ready(asset: asset, record: record, fetched: 0, inPartialFile: false, lock: lock))
        }
        let spares = self.spares
        try await runBlocking { spares.place(at: layout.resumeRecord(id)) }
        let (result, url) = try await fetch(asset, of: item, hasOrigin: standing.hasOrigin, emit: emit)
        // The feed's new link is what the catalog now holds; the commit below must not put back the old.
        asset.url = url
        return .ready(Ready(asset: asset, record: result.record, fetched: result.bytesFetched, inPartialFile: true, lock: lock))
    }

    /// The outcome of an error that ended an asset's processing (a failure is recorded).
    private func outcome(
        of error: any Error, _ item: WorkItem, fetched: Int64, emit: @escaping @Sendable (DownloadEvent.Kind) -> Void
    ) async -> Outcome {
        switch error {
        case is CancellationError: return .interrupted
        case is AssetRemoved: return .removed
        case let error as NewsstandError: return await fail(item, error, fetched: fetched, emit: emit)
        default:
            return await fail(
                item, NewsstandError(.io, "\(item.asset.url.absoluteString): \(error)", underlying: error),
                fetched: fetched, emit: emit)
        }
    }

    /// Fetches the asset into its partial file (the caller holds a network slot). A subscribed issue's
    /// link that expired is asked of its feed once, and the partial file continues at the new URL (the
    /// engine sends If-Range, so no byte already here is fetched again).
    /// - Returns: The engine's result and the URL the bytes came from.
    private func fetch(
        _ asset: AssetDownload, of item: WorkItem, hasOrigin: Bool, emit: @escaping @Sendable (DownloadEvent.Kind) -> Void
    ) async throws -> (DownloadEngine.Result, URL) {
        let id = asset.id
        var job = DownloadEngine.Job(
            assetID: id, url: asset.url, sha256: asset.sha256, headers: asset.headers,
            partialPath: layout.partialFile(id), recordPath: layout.resumeRecord(id), rateLimiter: rateLimiter,
            segments: options.segments)
        try Task.checkCancellation()
        if let gate = options.startGate { try await gate.waitForStart(origin: URLCredentials.origin(of: asset.url)) }
        var refreshed = false
        while true {
            let attempt = job
            do {
                try Task.checkCancellation()
                let result = try await engine.fetch(attempt) { progress in
                    switch progress {
                    case .started(let from, let expected):
                        emit(.started(resumingFrom: from, expectedBytes: expected))
                    case .bytes(let received, let expected, let rate):
                        emit(.progress(receivedBytes: received, expectedBytes: expected, bytesPerSecond: rate))
                    case .retrying(let attempt, let delay, let reason):
                        emit(.retrying(attempt: attempt, delay: delay, reason: reason))
                    }
                }
                return (result, job.url)
            } catch let error as NewsstandError
                where !refreshed && hasOrigin && DownloadRun.expiredLinkStatuses.contains(error.httpStatus ?? 0)
            {
                refreshed = true
                guard let url = await hooks.refreshedURL(id, item.issueName), url != job.url else { throw error }
                emit(.retrying(attempt: 1, delay: .zero, reason: "\(error.message); the feed now gives \(url.absoluteString)"))
                job.url = url
            }
        }
    }

    /// Records the failure (the asset stays in the saved list, so that `resume` retries it).
    private func fail(
        _ item: WorkItem, _ error: NewsstandError, fetched: Int64, emit: @Sendable (DownloadEvent.Kind) -> Void
    ) async -> Outcome {
        let id = item.asset.id
        let received = POSIX.fileSize(layout.partialFile(id)) ?? POSIX.fileSize(layout.completedFile(id)) ?? 0
        let commit = hooks.commit
        func record() async throws -> Bool {
            try await commit { changes in
                try changes.updateAsset(id, ofIssueNamed: item.issueName) { asset in
                    asset.state = .failed
                    asset.error = error.message
                    asset.receivedBytes = received
                }
            }
        }
        var listed: Bool?
        do {
            listed = try await record()
        } catch {
            // Most likely the disk is full (this very download may have filled it): give up the reserve so that
            // the failure is stored, rather than leaving the asset `downloading`.
            if SpaceReserve.release(layout) {
                listed = try? await record()
            }
        }
        if listed == false { return .removed }
        emit(.failed(error))
        return .failed(error, fetched: fetched)
    }

    /// Places a complete, verified file: unpacks an archive, or moves a plain file into the content
    /// folder, committing the asset's state around each step.
    private func place(
        _ asset: AssetDownload, item: WorkItem, record: ResumeRecord?, emit: @escaping @Sendable (DownloadEvent.Kind) -> Void
    ) async throws -> AssetDownload {
        let layout = self.layout
        let placer = self.placer
        let spares = self.spares
        let id = asset.id
        let completed = layout.completedFile(id)
        let target = AssetPlacer.Target(
            assetID: id, issueName: item.issueName, folderName: item.folderName, fileStem: item.fileStem)
        var asset = asset
        let folder = layout.contentFolder(item.folderName)
        // A crash after a kept archive was merged and placed, before the `unpacked` commit: finish the commit,
        // after the flush that crash may have cut short (a folder gone is a removal, which the commit finds).
        if asset.unpack, asset.isArchive == true, let placed = record?.placedAs,
            placer.alreadyPlaced(record, id: id, folder: item.folderName)
        {
            try await runBlocking { if POSIX.exists(folder) { try placer.flushUnpacked(folder) } }
            asset.state = .unpacked
            asset.fileName = placed
            asset.error = nil
            let done = asset
            try await commitAsset(done, of: item, finished: true)
            try? await runBlocking { try spares.retire(layout.resumeRecord(id)) }
            return done
        }
        // A filed issue's archive is placed whole: unpacked, its entries would mix with the other issues' files.
        if asset.unpack, item.fileStem == nil, POSIX.exists(completed), ArchiveExtractor.isArchive(at: completed) {
            asset.state = .downloaded
            asset.isArchive = true
            let snapshot = asset
            try await commitAsset(snapshot, of: item)
            emit(.unpacking)
            let keep = options.keepArchives
            let placedName = try await runBlocking {
                try placer.unpack(snapshot, into: target, keepingArchive: keep, record: record)
            }
            asset.state = .unpacked
            asset.fileName = placedName
            asset.error = nil
            let done = asset
            try await commitAsset(done, of: item, finished: true)
            try? await runBlocking {
                try POSIX.unlinkIfPresent(completed)
                try spares.retire(layout.resumeRecord(id))
            }
            return done
        }
        // A plain file (or an archive kept whole).
        let name: String
        if let placed = record?.placedAs, placer.alreadyPlaced(record, id: id, folder: item.folderName) {
            // Placed by a run that crashed, perhaps before its flush.
            try await runBlocking { if POSIX.exists(folder) { try placer.flushPlaced(in: folder, folderIsNew: true) } }
            name = placed
        } else {
            let plain = asset
            name = try await runBlocking { try placer.placeFile(of: plain, into: target, record: record) }
        }
        asset.state = .downloaded
        asset.isArchive = false
        asset.fileName = name
        asset.error = nil
        let done = asset
        try await commitAsset(done, of: item, finished: true)
        try? await runBlocking { try spares.retire(layout.resumeRecord(id)) }
        return done
    }

    private func commitAsset(_ asset: AssetDownload, of item: WorkItem, finished: Bool = false) async throws {
        let id = asset.id
        let listed = try await hooks.commit { changes in
            guard try changes.updateAsset(id, ofIssueNamed: item.issueName, { $0 = asset }) else { return false }
            if finished { changes.clearPending(id) }
            return true
        }
        if !listed { throw AssetRemoved() }
    }
}
