import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import Synchronization
import NewsstandCore

/// Segmented downloads (`--segments N`): one asset over N connections, each fetching its own byte range
/// into the one partial file.
///
/// A probe for the first byte decides: only a 206 naming the full size, with a strong ETag or a
/// Last-Modified to send in `If-Range`, for a resource of at least two minimum segments, is split. Each
/// range must come back as exactly that range of that version; any disagreement (a 200, a changed
/// validator, a wrong `Content-Range`) throws the partial file away and returns nil, and the caller
/// starts over on one connection, so bytes of two versions are never joined. The plan and each range's
/// progress live in the resume record, saved only for bytes that have landed, and a resume moves each
/// range on past the bytes it finds written since (``SegmentPlan/advancedToBytesOnDisk(in:)``), so
/// `kill -9` resumes every range where its bytes end. The SHA-256 is computed from the finished file (ranges arrive out of order).
extension DownloadEngine {
    /// Fetches `job` in segments.
    /// - Returns: The result, or nil when the asset is to be fetched on one connection instead (nothing of a
    ///   plan is left on disk then).
    /// - Throws: `NewsstandError` for permanent failures (the plan is kept for a resume), `CancellationError`.
    /// - Parameters:
    ///   - known: What the first response of an automatic split already told (no probe is sent); that
    ///     response's connection was found capped, so every connection opens at once.
    ///   - keptBytes: The bytes `[0, keptBytes)` that first response wrote: the ranges continue after them.
    func fetchSegmented(
        _ job: Job, known: Probe? = nil, keeping keptBytes: Int64 = 0, progress: @escaping @Sendable (Progress) -> Void
    ) async throws -> Result? {
        guard let (probe, plan) = try await plan(for: job, known: known, keeping: keptBytes) else { return nil }
        let version = probe.version
        let remaining = plan.total - plan.received
        let folder = (job.partialPath as NSString).deletingLastPathComponent
        if let figures = FreeSpace.shortfall(needing: remaining, at: folder) {
            throw NewsstandError(
                .insufficientSpace,
                FreeSpace.message("to download \(job.url.absoluteString)", needing: remaining, figures: figures, path: folder))
        }
        var record = ResumeRecord(
            url: job.url.absoluteString, etag: version.etag, lastModified: version.lastModified, expectedBytes: plan.total,
            contentDisposition: version.contentDisposition, contentType: version.contentType)
        record.segments = plan
        let base = record
        try await runBlocking { try base.save(job.recordPath) }

        let tracker = SegmentTracker(plan: plan, record: base, job: job)
        let throttle = ProgressThrottle(start: ContinuousClock.now, baseline: plan.received, bodyStart: 0)
        progress(.started(resumingFrom: plan.received, expected: plan.total))
        let onBytes: @Sendable (Int) -> Void = { count in
            let total = tracker.receive(count)
            if let rate = throttle.shouldReport(total: total) {
                progress(.bytes(received: total, expected: plan.total, bytesPerSecond: rate))
            }
        }
        do {
            try await fetchRanges(
                of: job, plan: plan, target: probe.target, foundCapped: known != nil, tracker: tracker, onBytes: onBytes,
                progress: progress)
        } catch let disagreement as SegmentDisagreement {
            logger.debug("starting \(job.url.absoluteString) over on one connection: \(disagreement.reason)")
            try await discard(job)
            return nil
        } catch {
            // Cancelled or failed: what landed is saved for a resume.
            try? await runBlocking { try tracker.save() }
            throw error
        }
        // Every range is whole: no plan is needed any more, and the record reads as a plain complete one.
        try await runBlocking { try base.withoutSegments.save(job.recordPath) }
        let size = try await checkedWhole(job, total: plan.total)
        progress(.bytes(received: size, expected: size, bytesPerSecond: throttle.finalRate(total: size)))
        return Result(size: size, record: base.withoutSegments, bytesFetched: tracker.fetched)
    }

    /// The plan to fetch `job` by: a saved one that still fits its file and the server's version, or a new one
    /// from a probe (or from `known`, the first response of an automatic split).
    /// - Returns: The probe and the plan, or nil when the asset is to be fetched on one connection (a saved
    ///   plan that no longer fits is discarded then).
    private func plan(for job: Job, known: Probe?, keeping keptBytes: Int64) async throws -> (Probe, SegmentPlan)? {
        let saved = ResumeRecord.load(job.recordPath)
        let fileSize = POSIX.fileSize(job.partialPath) ?? 0
        if let plan = saved?.segments, !plan.isConsistent(fileSize: fileSize) || plan.bootID != SegmentPlan.currentBootID {
            logger.debug("dropping a segment plan that does not fit its file or this boot: \(job.url.absoluteString)")
            try await discard(job)
            return nil
        }
        // A partial file from one connection is continued on one connection, but for the first response of
        // an automatic split, whose bytes begin the plan.
        if saved?.segments == nil, fileSize > 0, known == nil || fileSize != keptBytes { return nil }

        let probe: Probe
        do {
            var answer = known
            if answer == nil { answer = try await self.probe(job) }
            guard let answer else {
                if saved?.segments != nil { try await discard(job) }
                return nil
            }
            probe = answer
        } catch let error where saved?.segments == nil && !(error is CancellationError) {
            // Nothing planned yet: the one-connection path meets the same failure with its own retries.
            return nil
        }
        if let kept = saved?.segments, kept.total == probe.version.total, kept.validator == probe.version.validator {
            // The record lags the file by up to about a MiB per range: what landed since is on disk.
            let partial = job.partialPath
            return (probe, try await runBlocking { kept.advancedToBytesOnDisk(in: partial) })
        }
        if saved?.segments != nil { try await discard(job) }
        var fresh = SegmentPlan(total: probe.version.total, validator: probe.version.validator, count: job.segments ?? SegmentPlan.automaticCount)
        guard fresh.segments.count > 1 else { return nil }
        fresh.markReceived(upTo: keptBytes)
        return (probe, fresh)
    }

    /// Fetches every range not done yet. A connection takes the next range not yet started; the others open
    /// only when the first one turns out to be capped (see ``SegmentRamp``), so an uncapped server keeps one:
    /// segments never slow it.
    /// - Parameter foundCapped: The first response's connection was found capped already: every connection
    ///   opens at once.
    private func fetchRanges(
        of job: Job, plan: SegmentPlan, target: Hop, foundCapped: Bool, tracker: SegmentTracker,
        onBytes: @escaping @Sendable (Int) -> Void, progress: @escaping @Sendable (Progress) -> Void
    ) async throws {
        let ranges = RangeQueue(plan.segments.indices.filter { !plan.segments[$0].isDone })
        let most = min(job.segments ?? SegmentPlan.automaticCount, plan.segments.count)
        let uncappedRate = configuration.uncappedRate
        try await withThrowingTaskGroup(of: Bool.self) { group in
            var connections = 0
            let start = (bytes: tracker.receivedSoFar, time: ContinuousClock.now)
            func addConnection() {
                connections += 1
                let first = connections == 1
                group.addTask {
                    while let run = ranges.next(joiningWhile: { tracker.segment($0).next == tracker.segment($0).start }) {
                        try await self.fetchSegments(
                            run, of: job, plan: plan, target: target, tracker: tracker, onBytes: onBytes,
                            progress: progress)
                        // A whole range in less than the window, faster than any cap: the look would say the
                        // same later, after a request and a pause at each boundary until then.
                        if first, !ranges.isJoining,
                            SegmentRamp.isUncapped(
                                range: tracker.receivedSoFar - start.bytes, over: ContinuousClock.now - start.time,
                                uncapped: uncappedRate)
                        {
                            ranges.joinRest()
                        }
                    }
                    return false
                }
            }
            if most <= 1 { ranges.joinRest() }
            addConnection()
            if foundCapped {
                for _ in 0..<min(most - connections, ranges.remaining) { addConnection() }
            } else if most > 1, ranges.remaining > 0 {
                group.addTask {
                    // The look. Cut short (cancelled) when every range is done before the window ends.
                    try? await Task.sleep(for: SegmentRamp.window)
                    return true
                }
            }
            do {
                while let isLook = try await group.next() {
                    guard isLook else {
                        connections -= 1
                        if connections == 0 { group.cancelAll() }  // no range left: stop waiting to look
                        continue
                    }
                    // Decided already: the first connection found itself uncapped at a range's end.
                    guard connections > 0, !ranges.isJoining else { continue }
                    let bytes = tracker.receivedSoFar - start.bytes
                    let capped = SegmentRamp.isCapped(
                        bytes: bytes, over: ContinuousClock.now - start.time, uncapped: uncappedRate)
                    logger.debug(
                        "\(job.url.absoluteString): \(bytes) bytes on one connection in the first window; \(capped ? "capped, opening more" : "not capped")")
                    // One connection from here on: it asks for the ranges left in one request, not one each.
                    guard capped else {
                        ranges.joinRest()
                        continue
                    }
                    for _ in 0..<min(most - connections, ranges.remaining) { addConnection() }
                }
            } catch {
                ranges.close()
                group.cancelAll()
                try? await group.waitForAll()
                throw error
            }
        }
    }

    /// Checks the finished file: its size, and its SHA-256 when the job names one (computed from the file,
    /// as ranges arrive out of order). A bad file goes, as on one connection (the error says so).
    /// - Returns: The file's size.
    private func checkedWhole(_ job: Job, total: Int64) async throws -> Int64 {
        let size = POSIX.fileSize(job.partialPath) ?? 0
        guard size == total else {
            try await discard(job)
            throw NewsstandError(.lengthMismatch, "\(job.url.absoluteString) came to \(size) of \(total) bytes")
        }
        guard job.sha256 != nil else { return size }
        let (partial, record) = (job.partialPath, job.recordPath)
        let digest = try await runBlocking { FileDigest.sha256(of: partial) }
        do {
            try verify(job, digest: digest)
        } catch {
            try await runBlocking {
                try POSIX.unlinkIfPresent(partial)
                try POSIX.unlinkIfPresent(record)
            }
            throw error
        }
        return size
    }

    /// What the probe learned: where the bytes are (after redirects) and which version they are.
    struct Probe: Sendable {
        var target: Hop
        var version: RangedVersion
    }

    /// Asks for the first byte, following redirects.
    /// - Returns: The probe, or nil when the answer does not allow segments.
    private func probe(_ job: Job) async throws -> Probe? {
        var hop = Hop(url: job.url, route: .direct)
        var visited: Set<String> = [job.url.absoluteString]
        while true {
            try Task.checkCancellation()
            hop.route = try route(for: hop.url)
            var headers = DownloadEngine.baseHeaders
            headers.add(name: "Range", value: "bytes=0-0")
            let request = try request(
                for: hop.url, route: hop.route,
                headers: DownloadEngine.hopHeaders(headers, adding: job.headers, from: job.url, to: hop.url))
            let delegate = ProbeDelegate()
            do {
                _ = try await execute(
                    request, delegate: delegate, route: hop.route, separateConnections: true, received: { 0 })
            } catch is ProbeDelegate.Stop {}
            guard let answer = delegate.answer else { return nil }
            if [301, 302, 303, 307, 308].contains(answer.status), let location = answer.headers.first(name: "location"),
                let next = URL(string: location, relativeTo: hop.url)?.absoluteURL,
                ["http", "https"].contains(next.scheme?.lowercased() ?? ""),
                visited.count <= configuration.maxRedirects, visited.insert(next.absoluteString).inserted
            {
                hop.url = next
                continue
            }
            guard answer.status == 206,
                let range = ContentRange(answer.headers.first(name: "content-range") ?? ""), range.start == 0,
                let total = range.total, total >= 2 * SegmentPlan.minimumSegment
            else { return nil }
            return RangedVersion(total: total, headers: answer.headers, url: job.url).map { Probe(target: hop, version: $0) }
        }
    }

    /// Fetches what is left of a run of adjacent ranges in one request, retrying transient failures as the
    /// one-connection path does. A run is one range, or, once one connection is all there will be, every
    /// range left (see ``RangeQueue/joinRest()``).
    private func fetchSegments(
        _ run: ClosedRange<Int>, of job: Job, plan: SegmentPlan, target: Hop, tracker: SegmentTracker,
        onBytes: @escaping @Sendable (Int) -> Void, progress: @escaping @Sendable (Progress) -> Void
    ) async throws {
        var failuresWithoutProgress = 0
        while true {
            try Task.checkCancellation()
            // Bytes land in order along the run, so what is left is one range: from the first unfinished one.
            guard let first = run.first(where: { !tracker.segment($0).isDone }) else { return }
            let segment = SegmentPlan.Segment(
                start: tracker.segment(first).start, end: tracker.segment(run.upperBound).end,
                next: tracker.segment(first).next)
            let path = job.partialPath
            let recordPath = job.recordPath
            let flushed = configuration.flushesToDisk
            let sink = try await runBlocking {
                try FileSink(
                    path: path, recordPath: recordPath, hashing: false, at: segment.next, startsWriteback: flushed
                ) { end in
                    tracker.landed(first...run.upperBound, at: end)
                }
            }
            var headers = DownloadEngine.baseHeaders
            headers.add(name: "Range", value: segment.rangeHeader)
            headers.add(name: "If-Range", value: plan.validator)
            let delegate = SegmentDelegate(
                plan: plan, segment: segment, sink: sink, rateLimiter: job.rateLimiter, onBytes: onBytes)
            do {
                let request = try request(
                    for: target.url, route: target.route,
                    headers: DownloadEngine.hopHeaders(headers, adding: job.headers, from: job.url, to: target.url))
                try await execute(
                    request, delegate: delegate, route: target.route, separateConnections: true,
                    received: { delegate.receivedBytes }, held: { delegate.limiterHeld })
                _ = try await sink.drain()
                tracker.addFetched(delegate.receivedBytes)
                if tracker.segment(run.upperBound).isDone { return }
                throw NewsstandError(.lengthMismatch, "\(job.url.absoluteString): a range ended early")
            } catch let error as SegmentDisagreement {
                _ = try? await sink.drain()
                throw error
            } catch {
                _ = try? await sink.drain()
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if !(error is NewsstandError) { tracker.addFetched(delegate.receivedBytes) }
                let classified = await DownloadEngine.classifyExplained(error, url: job.url, hop: target)
                guard classified.isTransient else { throw classified.error }
                let reached = run.first(where: { !tracker.segment($0).isDone }).map { tracker.segment($0).next } ?? segment.end
                let madeProgress = reached > segment.next && !(error is StallFailure)
                try await backOff(
                    after: classified, of: error, madeProgress: madeProgress, failures: &failuresWithoutProgress,
                    progress: progress)
            }
        }
    }

    /// Empties the partial file and deletes its record: the next attempt starts from zero. Emptied in place,
    /// not unlinked: after an automatic split the one-connection attempt that goes on holds it open.
    private func discard(_ job: Job) async throws {
        let (partial, record) = (job.partialPath, job.recordPath)
        try await runBlocking {
            try POSIX.unlinkIfPresent(record)
            guard POSIX.exists(partial) else { return }
            let fd = try POSIX.open(partial, O_WRONLY | O_NOFOLLOW)
            defer { _ = close(fd) }
            try POSIX.call("cannot truncate", path: partial) { ftruncate(fd, 0) }
        }
    }

    /// The headers every request of the engine carries.
    static var baseHeaders: HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "User-Agent", value: NewsstandInfo.userAgent)
        headers.add(name: "Accept-Encoding", value: "identity")
        return headers
    }
}

extension ResumeRecord {
    /// The record with no segment plan: what a finished segmented download leaves.
    var withoutSegments: ResumeRecord {
        var copy = self
        copy.segments = nil
        return copy
    }
}

#if canImport(Glibc)
    import Glibc
#endif
