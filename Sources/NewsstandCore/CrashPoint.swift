#if canImport(Glibc)
    import Glibc
#endif

/// Named instants inside multi-step writes where the tests kill the process (debug builds only), so
/// that a `kill -9` test proves each crash window rather than hoping a random signal lands in one.
package enum CrashPoint {
    /// Dies at once with SIGKILL when `ISSUES_CRASH_AT` names `point`. Compiled out of release builds.
    @inline(__always)
    package static func reached(_ point: StaticString) {
        #if DEBUG
            if let wanted = getenv("ISSUES_CRASH_AT"), String(cString: wanted) == point.description {
                kill(getpid(), SIGKILL)
            }
        #endif
    }
}
