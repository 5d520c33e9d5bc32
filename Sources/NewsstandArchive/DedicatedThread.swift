import Glibc

/// Runs bodies on POSIX threads of their own, created and joined for the purpose.
///
/// Dedicated threads — not Swift's or Foundation's pooled threads — because an extraction changes its
/// thread's working directory, umask and locale, and such a thread must die afterwards.
enum DedicatedThread {
    /// Runs `body` on a new POSIX thread and waits for it to end.
    static func run<Output>(_ body: @escaping () -> Output) throws(ArchiveError) -> Output {
        try runAll([body])[0].get()
    }

    /// Runs each body on a new POSIX thread, all at once, and waits for them all to end.
    ///
    /// - Parameter notStarted: Called at once, before any thread is joined, for a body whose thread could
    ///   not be started, so that bodies waiting for one another can be told it will never come.
    /// - Returns: Each body's output, or why its thread could not be started, in the order of `bodies`.
    static func runAll<Output>(
        _ bodies: [() -> Output], notStarted: (Int) -> Void = { _ in }
    ) -> [Result<Output, ArchiveError>] {
        // Each box is written by its thread before it ends and read here only after pthread_join, which orders
        // the two.
        let boxes = bodies.map { _ in OutputBox<Output>() }
        var threads: [pthread_t?] = []
        for (index, body) in bodies.enumerated() {
            let box = boxes[index]
            let context = Unmanaged.passRetained(ThreadWork { box.output = body() }).toOpaque()
            var thread = pthread_t()
            let status = pthread_create(
                &thread,
                nil,
                { raw in
                    if let raw {
                        Unmanaged<ThreadWork>.fromOpaque(raw).takeRetainedValue().body()
                    }
                    return nil
                },
                context
            )
            if status == 0 {
                threads.append(thread)
            } else {
                Unmanaged<ThreadWork>.fromOpaque(context).release()
                box.startFailure = ArchiveError.system(status, "cannot start the extraction thread")
                threads.append(nil)
                notStarted(index)
            }
        }
        for thread in threads {
            if let thread { pthread_join(thread, nil) }
        }
        return boxes.map { box in
            if let output = box.output { return .success(output) }
            return .failure(
                box.startFailure ?? ArchiveError(kind: .io, message: "the extraction thread ended without a result"))
        }
    }
}

/// Where one thread leaves its output.
private final class OutputBox<Output> {
    var output: Output?
    var startFailure: ArchiveError?
}

/// The closure a thread started by `DedicatedThread.runAll` runs, passed through `pthread_create`'s
/// context pointer.
private final class ThreadWork {
    let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }
}
