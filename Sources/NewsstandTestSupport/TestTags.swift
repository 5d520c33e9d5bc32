import Testing

extension Tag {
    /// Tests that take ten seconds or more on the 2-core machine (kill -9 loops, throttled or stalling
    /// transfers, the simulated week, many child processes). `swift test --skip tag:slow` leaves them out
    /// while iterating; `make test` and CI run them all.
    @Tag public static var slow: Self
}
