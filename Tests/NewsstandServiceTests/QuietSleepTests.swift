import Foundation
import Testing

@testable import NewsstandService

/// The service's sleep: one thread in poll(2) for the whole wait, ended early by cancellation.
@Suite(.timeLimit(.minutes(1))) struct QuietSleepTests {
    @Test func itSleepsForTheTimeAsked() async throws {
        let start = ContinuousClock.now
        try await QuietSleep.sleep(seconds: 0.3)
        let slept = ContinuousClock.now - start
        #expect(slept >= .milliseconds(300) && slept < .seconds(5), "slept \(slept)")
    }

    @Test func cancellationEndsALongSleepAtOnce() async throws {
        let start = ContinuousClock.now
        let sleeper = Task { try await QuietSleep.sleep(seconds: 600) }
        try await Task.sleep(for: .milliseconds(100))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(ContinuousClock.now - start < .seconds(10))
        // Cancelled before it starts: it returns at once too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await QuietSleep.sleep(seconds: 600)
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }
}
