import Foundation
import Testing
import NewsstandTestSupport

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// The plan alone: splitting, resuming and checking answers, with no network.
@Suite(.timeLimit(.minutes(5))) struct SegmentPlanTests {
    /// One connection slower than a fast local link is capped: the others open. A fast one keeps alone.
    @Test func theOtherConnectionsOpenOnlyWhenTheFirstIsCapped() {
        let window = SegmentRamp.window
        #expect(SegmentRamp.isCapped(bytes: 2 << 20, over: window))  // nginx limit_rate 2m's first burst
        #expect(!SegmentRamp.isCapped(bytes: 300 << 20, over: window))  // 1 GB/s over loopback
        #expect(!SegmentRamp.isCapped(bytes: 0, over: .zero))
    }

    /// A connection that ends a range before the window, with more than a burst at more than a cap's rate,
    /// is judged uncapped there; a burst, a slow range, or a range ending after the window is left to the look.
    @Test func aFastWholeRangeIsJudgedBeforeTheWindow() {
        #expect(SegmentRamp.isUncapped(range: 128 << 20, over: .milliseconds(70)))  // a 1 GiB file's first range
        #expect(!SegmentRamp.isUncapped(range: 8 << 20, over: .milliseconds(5)))  // fast, but no more than a burst
        #expect(!SegmentRamp.isUncapped(range: 16 << 20, over: .milliseconds(290)))  // 55 MiB/s: could be capped
        #expect(!SegmentRamp.isUncapped(range: 128 << 20, over: SegmentRamp.window))  // the look decides
    }

    /// The bytes a capped first response kept, `[0, kept)`, move the cursors of the ranges they cover.
    @Test func keptBytesMoveTheCursorsOfTheRangesTheyCover() {
        var plan = SegmentPlan(total: 64 << 20, validator: "\"e\"", count: 4)
        plan.markReceived(upTo: (16 << 20) + 5)
        #expect(plan.segments.map(\.next) == [16 << 20, (16 << 20) + 5, 32 << 20, 48 << 20])
        #expect(plan.segments.map(\.isDone) == [true, false, false, false])
        #expect(plan.received == (16 << 20) + 5)
        #expect(plan.isConsistent(fileSize: (16 << 20) + 5))
    }

    @Test func splitsIntoRangesOfAtLeastTheMinimum() {
        let plan = SegmentPlan(total: 10 << 20, validator: "\"e\"", count: 8)
        #expect(plan.segments.count == 2)
        #expect(plan.segments.map(\.start) == [0, 5 << 20])
        #expect(plan.segments.last?.end == 10 << 20)
        #expect(SegmentPlan(total: (8 << 20) - 1, validator: "\"e\"", count: 8).segments.count == 1)
        let many = SegmentPlan(total: 1 << 30, validator: "\"e\"", count: 8)
        #expect(many.segments.count == 8)
        #expect(zip(many.segments, many.segments.dropFirst()).allSatisfy { $0.end == $1.start })
        #expect(many.segments.first?.rangeHeader == "bytes=0-134217727")
    }

    @Test func aPlanIsOnlyResumedWhenItFitsTheFile() {
        var plan = SegmentPlan(total: 12 << 20, validator: "\"e\"", count: 3)
        plan.segments[1].next = plan.segments[1].start + 1000
        #expect(plan.isConsistent(fileSize: plan.segments[1].next))
        // A range that has landed bytes needs them in the file; one that has not needs nothing.
        #expect(!plan.isConsistent(fileSize: plan.segments[1].next - 1))
        var gap = plan
        gap.segments[1].start += 1
        #expect(!gap.isConsistent(fileSize: 12 << 20))
        var past = plan
        past.segments[0].next = past.segments[0].end + 1
        #expect(!past.isConsistent(fileSize: 12 << 20))
        #expect(plan.received == 1000)
    }

    @Test func acceptsOnlyTheExactRangeOfTheSameVersion() throws {
        let plan = SegmentPlan(total: 12 << 20, validator: "\"e\"", count: 3)
        let second = plan.segments[1]
        #expect(plan.accepts(try #require(ContentRange("bytes 4194304-8388607/12582912")), for: second))
        #expect(!plan.accepts(try #require(ContentRange("bytes 4194304-8388606/12582912")), for: second))
        #expect(!plan.accepts(try #require(ContentRange("bytes 4194304-8388607/12582913")), for: second))
        #expect(!plan.accepts(try #require(ContentRange("bytes 0-8388607/12582912")), for: second))
        #expect(plan.matches(etag: "\"e\"", lastModified: nil))
        #expect(!plan.matches(etag: "\"f\"", lastModified: nil))
        #expect(!plan.matches(etag: nil, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT"))
        let dated = SegmentPlan(total: 12 << 20, validator: "Mon, 01 Jan 2024 00:00:00 GMT", count: 3)
        #expect(dated.matches(etag: "\"x\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT"))
        #expect(!dated.matches(etag: nil, lastModified: "Tue, 02 Jan 2024 00:00:00 GMT"))
        #expect(!dated.matches(etag: nil, lastModified: nil))
    }

    /// Until the ramp has decided, a connection takes one range at a time (so others can take the rest);
    /// once one connection is all there will be, it takes every adjacent range left in one request, short
    /// of a range that already has bytes on disk (those are never asked for again).
    @Test func oneConnectionTakesTheRangesLeftTogetherOnceNoOthersWillOpen() {
        let queue = RangeQueue([0, 1, 2, 4, 5, 6])
        let touched: Set<Int> = [5]
        #expect(queue.next(joiningWhile: { !touched.contains($0) }) == 0...0)
        queue.joinRest()
        #expect(queue.next(joiningWhile: { !touched.contains($0) }) == 1...2)  // 3 is done: not adjacent
        #expect(queue.next(joiningWhile: { !touched.contains($0) }) == 4...4)  // 5 has bytes: its own request
        #expect(queue.next(joiningWhile: { !touched.contains($0) }) == 5...6)
        #expect(queue.next(joiningWhile: { _ in true }) == nil)
    }

    /// Bytes landing along a run of ranges move each range's cursor to its part of them, never back.
    @Test func bytesLandingAcrossARunMoveEachRangesCursor() throws {
        let plan = SegmentPlan(total: 12 << 20, validator: "\"e\"", count: 3)
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = DownloadEngine.Job(
            assetID: "a", url: try #require(URL(string: "http://127.0.0.1/a")), sha256: nil,
            partialPath: folder.appendingPathComponent("a.part").path,
            recordPath: folder.appendingPathComponent("a.json").path)
        let tracker = SegmentTracker(plan: plan, record: ResumeRecord(url: "http://127.0.0.1/a"), job: job)
        tracker.landed(1...2, at: (6 << 20))
        #expect(tracker.segment(0).next == 0)
        #expect(tracker.segment(1).next == 6 << 20)
        #expect(tracker.segment(2).next == 8 << 20)  // its start: nothing of it yet
        tracker.landed(1...2, at: (9 << 20))
        #expect(tracker.segment(1).isDone)
        #expect(tracker.segment(2).next == 9 << 20)
        tracker.landed(1...2, at: (7 << 20))  // an older landing never moves a cursor back
        #expect(tracker.segment(2).next == 9 << 20)
        // The range that finished was saved with the plan.
        let saved = try #require(ResumeRecord.load(job.recordPath)?.segments)
        #expect(saved.segments[1].isDone)
        // A range that was already whole is no reason to save again: a few more bytes of the next range
        // (far under a MiB) leave the record alone. Saving on every write once a run's first range was
        // done cost 2,000 saves on a 1 GiB download.
        try FileManager.default.removeItem(atPath: job.recordPath)
        tracker.landed(1...2, at: (9 << 20) + 4096)
        #expect(tracker.segment(2).next == (9 << 20) + 4096)
        #expect(!FileManager.default.fileExists(atPath: job.recordPath))
    }

    /// After a `kill -9` the record lags the file: a resume moves each range on to the last byte its
    /// transfers wrote, never past the range, never into bytes it cannot tell from a hole (zeros).
    @Test func aResumedPlanContinuesAfterTheBytesOnDisk() throws {
        let mib: Int64 = 1 << 20
        var plan = SegmentPlan(total: 16 * mib, validator: "\"e\"", count: 4)
        #expect(plan.segments.map(\.start) == [0, 4 * mib, 8 * mib, 12 * mib])
        plan.segments[0].next = 512 << 10
        plan.segments[3].next = 12 * mib + 100_000
        let ones = { (count: Int64) in Data(repeating: 0xA5, count: Int(count)) }
        try withTemporaryDirectorySync { folder in
            let path = folder.appendingPathComponent("a.part").path
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let file = try #require(FileHandle(forWritingAtPath: path))
            func write(_ data: Data, at offset: Int64) throws {
                try file.seek(toOffset: UInt64(offset))
                try file.write(contentsOf: data)
            }
            try write(ones(mib + 1000), at: 0)  // range 0: 1000 bytes past a MiB, saved at 512 KiB
            try write(ones(4 * mib - 10), at: 4 * mib)  // range 1: all but 10 bytes, none saved
            try write(ones(5000), at: 8 * mib)  // range 2: 5000 bytes, beside range 1's
            // Range 3: its last 5,000 bytes written are zeros, which cannot be told from a hole.
            try write(ones(195_000) + Data(count: 5000), at: 12 * mib + 100_000)
            try file.close()
            let resumed = plan.advancedToBytesOnDisk(in: path)
            #expect(
                resumed.segments.map(\.next) == [mib + 1000, 8 * mib - 10, 8 * mib + 5000, 12 * mib + 295_000])
            #expect(resumed.isConsistent(fileSize: 12 * mib + 300_000))
        }
    }

    /// Zeros written past a range's bytes (a file system without holes reads a hole as allocated zeros) move
    /// no cursor: the record's stays.
    @Test func zerosAfterARangesBytesMoveNoCursor() throws {
        let mib: Int64 = 1 << 20
        var plan = SegmentPlan(total: 8 * mib, validator: "\"e\"", count: 2)
        plan.segments[0].next = 512 << 10
        try withTemporaryDirectorySync { folder in
            let path = folder.appendingPathComponent("a.part").path
            var bytes = Data(repeating: 0x5A, count: Int(mib))
            bytes.append(Data(count: Int(3 * mib)))  // allocated zeros up to the range's end
            #expect(FileManager.default.createFile(atPath: path, contents: bytes))
            #expect(plan.advancedToBytesOnDisk(in: path).segments.map(\.next) == [512 << 10, 4 * mib])
            // No file: the plan as saved.
            #expect(plan.advancedToBytesOnDisk(in: path + ".missing") == plan)
        }
    }
}
