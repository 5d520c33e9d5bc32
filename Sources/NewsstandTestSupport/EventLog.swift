public import NewsstandCore  // DownloadEvent, in the collector's API
import Synchronization

/// The download events of a run, collected from any task: the one collector every suite uses.
public final class EventLog: Sendable {
    private let events = Mutex<[DownloadEvent]>([])

    public init() {}

    public func append(_ event: DownloadEvent) { events.withLock { $0.append(event) } }

    public var all: [DownloadEvent] { events.withLock { $0 } }
}
