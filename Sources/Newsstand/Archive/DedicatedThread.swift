import Glibc

/// Runs a body on a POSIX thread of its own, created and joined for the purpose.
///
/// A dedicated thread — not one of Swift's or Foundation's pooled threads — because the extraction changes
/// its thread's working directory, umask and locale, and such a thread must die afterwards.
enum DedicatedThread {
    /// Runs `body` on a new POSIX thread and waits for it to end.
    static func run<Output>(_ body: @escaping () -> Output) throws(ArchiveError) -> Output {
        // Written by the new thread before it ends and read here only after pthread_join, which orders the two.
        var output: Output?
        let context = Unmanaged.passRetained(ThreadWork { output = body() }).toOpaque()
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
        guard status == 0 else {
            Unmanaged<ThreadWork>.fromOpaque(context).release()
            throw ArchiveError.system(status, "cannot start the extraction thread")
        }
        pthread_join(thread, nil)
        guard let output else {
            throw ArchiveError(kind: .io, message: "the extraction thread ended without a result")
        }
        return output
    }
}


/// The closure a thread started by `DedicatedThread.run` runs, passed through `pthread_create`'s
/// context pointer.
private final class ThreadWork {
    let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }
}
