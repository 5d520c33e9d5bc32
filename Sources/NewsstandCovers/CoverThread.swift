import Foundation

/// The one thread covers are made on, for the life of the process.
///
/// glibc gives each thread that allocates an arena of its own (up to `M_ARENA_MAX`, which the `issues` command sets
/// before its threads start), and a thread keeps its arena. Covers ran on whichever of the blocking pool's
/// 16 threads `runBlocking` picked, and each of those threads' arenas grew to a cover's working size and stayed
/// there: 13 arenas holding 1–7 MiB each in the middle of a 200-cover run, peak 106 MiB, where one cover alone
/// peaks at 58 MiB. On one thread the covers share one arena (`issues covers` of 200 mixed issues, release build:
/// 106.2 and 99.8 MiB before, against 76.3 MiB for the same binary run with `MALLOC_ARENA_MAX=2` from its start).
final class CoverThread: @unchecked Sendable {
    static let shared = CoverThread()

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var queue: [@Sendable () -> Void] = []

    private init() {
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = "covers"
        thread.start()
    }

    /// Runs `body` on the covers' thread and waits for it (blocking: callers are on the blocking pool).
    func run<Output: Sendable>(_ body: @escaping @Sendable () throws -> Output) throws -> Output {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<Output>()
        condition.lock()
        queue.append {
            box.result = Result { try body() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        // The semaphore orders the write on the covers' thread before this read.
        return try box.result!.get()
    }

    private func serve() {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let work = queue.removeFirst()
            condition.unlock()
            work()
        }
    }
}

/// Where the covers' thread leaves a body's result for the caller waiting on the semaphore.
private final class ResultBox<Output>: @unchecked Sendable {
    var result: Result<Output, any Error>?
}
