import ArgumentParser
import Foundation
import Newsstand
import NewsstandCore
import NewsstandCovers

#if canImport(Glibc)
    import Glibc
#endif

/// `issues cover-worker`: the process the command's covers are made in (see ``CoverWorkerClient``). Reads one
/// ``CoverWorkerRequest`` a line from its standard input (a socket to the command) and writes one
/// ``CoverWorkerReply`` a line back; ends at end of input. Hidden: only the `issues` command starts it.
struct CoverWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cover-worker", abstract: "Make covers for the issues command that started this one.",
        shouldDisplay: false)

    func run() throws {
        let maker = CoverMaker()
        var lines = LineReader(fd: 0)
        while let line = try lines.next(timeout: -1) {
            let reply: CoverWorkerReply
            do {
                let request = try JSONDecoder().decode(CoverWorkerRequest.self, from: Data(line))
                if let make = request.make {
                    reply = CoverWorkerReply(report: try maker.makeCover(make))
                } else if let path = request.check {
                    reply = CoverWorkerReply(problem: maker.problem(withCoverAt: path))
                } else {
                    reply = CoverWorkerReply(error: "an empty request")
                }
            } catch {
                reply = CoverWorkerReply(error: "\(error)")
            }
            var bytes = [UInt8](try JSONEncoder().encode(reply))
            bytes.append(0x0A)
            try bytes.withUnsafeBytes { try POSIX.writeAll(1, $0, path: "the cover worker's output") }
            // The tests kill the worker here: idle, its answer given, as the OOM killer or an admin might.
            CrashPoint.reached("cover-replied")
        }
    }
}

/// One line to the worker: a cover to make, or a cover file to check (`verify`).
struct CoverWorkerRequest: Codable {
    var make: CoverRequest?
    var check: String?
}

/// One line back: the cover made, the check's finding (nil: sound), or why the request failed (a file that
/// could not be written: the maker's error).
struct CoverWorkerReply: Codable {
    var report: CoverReport?
    var problem: String?
    var error: String?
}

/// Lines from a descriptor, each without its newline.
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// What each read fills, kept from read to read.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    init(fd: Int32) { self.fd = fd }

    enum Failure: Error {
        case timedOut
    }

    /// The next line, or nil at end of input (a last line without a newline is dropped: a writer that died
    /// mid-line). Waits at most `timeout` milliseconds for each read (negative: for ever).
    mutating func next(timeout: Int32) throws -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if start == buffer.count {
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                }
                return line
            }
            var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = POSIX.retrying { Glibc.poll(&poll, 1, timeout) }
            if ready == 0 { throw Failure.timedOut }
            if ready < 0 { return nil }
            let count = chunk.withUnsafeMutableBytes { bytes in
                POSIX.retrying { read(fd, bytes.baseAddress, bytes.count) }
            }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
