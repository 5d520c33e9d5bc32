import Testing

@testable import Newsstand

/// The plan alone: splitting, resuming and checking answers, with no network.
@Suite struct SegmentPlanTests {
    /// One connection slower than a fast local link is capped: the others open. A fast one keeps alone.
    @Test func theOtherConnectionsOpenOnlyWhenTheFirstIsCapped() {
        let window = SegmentRamp.window
        #expect(SegmentRamp.isCapped(bytes: 2 << 20, over: window))  // nginx limit_rate 2m's first burst
        #expect(!SegmentRamp.isCapped(bytes: 300 << 20, over: window))  // 1 GB/s over loopback
        #expect(!SegmentRamp.isCapped(bytes: 0, over: .zero))
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
}
