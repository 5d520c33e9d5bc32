import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// Marks a test that takes ten seconds or more on the 2-core machine (kill -9 loops, throttled or stalling
    /// transfers, the simulated week, the demo), measured in a serial run (`swift test --no-parallel
    /// --xunit-output`). `ISSUES_SKIP_SLOW_TESTS=1 swift test` leaves them out while iterating (this Swift's
    /// `swift test --skip` matches names, not tags); `make test` and CI run them all.
    public static var slow: Self {
        .enabled(
            if: ProcessInfo.processInfo.environment["ISSUES_SKIP_SLOW_TESTS"] == nil,
            "slow: left out under ISSUES_SKIP_SLOW_TESTS")
    }
}
