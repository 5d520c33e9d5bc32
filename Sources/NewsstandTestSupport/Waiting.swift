/// Waits until `condition` holds: the tests' one way to wait for a state (bytes on disk, a request seen,
/// a log line) instead of sleeping a fixed time and hoping it was reached.
/// - Parameters:
///   - what: Named in the error when the wait times out.
///   - timeout: How long to wait at most.
///   - condition: Checked at once, then every 10 ms.
/// - Throws: ``TimeoutError`` naming `what`, or what `condition` throws.
public func waitUntil(
    _ what: String, timeout: Duration = .seconds(30), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TimeoutError(description: "timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
