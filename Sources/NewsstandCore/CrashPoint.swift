import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Named instants inside multi-step writes where the tests kill the process (debug builds only), so
/// that a `kill -9` test proves each crash window rather than hoping a random signal lands in one.
package enum CrashPoint {
    /// How many times the named point has been reached in this process.
    private static let reachedCount = Atomic<Int>(0)

    /// Dies at once with SIGKILL when `ISSUES_CRASH_AT` names `point`, on its first arrival there or, with
    /// `ISSUES_CRASH_AFTER=N`, on its N-th (a point inside a loop: the upgrade's rows). Compiled out of release
    /// builds.
    @inline(__always)
    package static func reached(_ point: StaticString) {
        #if DEBUG
            guard let wanted = getenv("ISSUES_CRASH_AT"), String(cString: wanted) == point.description else { return }
            let arrivals = reachedCount.add(1, ordering: .relaxed).newValue
            let after = getenv("ISSUES_CRASH_AFTER").flatMap { Int(String(cString: $0)) } ?? 1
            if arrivals >= after { kill(getpid(), SIGKILL) }
        #endif
    }
}
