// sample-server: serves a directory over HTTP on 127.0.0.1, optionally cutting or throttling
// responses, for trying the downloader by hand and for end-to-end tests.
//
//   sample-server --root DIR [--port N] [--port-file FILE] [--cut-after BYTES] [--cut-path PATH]
//                 [--rate BYTES_PER_SEC] [--hold-after BYTES]

import Foundation
import NewsstandTestSupport

/// The parsed command line.
struct Options {
    var root = ""
    var port = 0
    var portFile: String?
    var cutAfter: Int?
    var cutPath: String?
    var rate: Int?
    var holdAfter: Int?
}

/// A command-line mistake, reported as `error: message` with exit status 64 (EX_USAGE).
struct UsageError: Error {
    var message: String
}

let usage = """
    usage: sample-server --root DIR [--port N] [--port-file FILE] [--cut-after BYTES] \
    [--cut-path PATH] [--rate BYTES_PER_SEC] [--hold-after BYTES]
    """

func parse(_ arguments: [String]) throws(UsageError) -> Options {
    var options = Options()
    var rootGiven = false
    var index = 0
    func value(for flag: String) throws(UsageError) -> String {
        index += 1
        guard index < arguments.count else { throw UsageError(message: "\(flag) needs a value") }
        return arguments[index]
    }
    func number(for flag: String, minimum: Int) throws(UsageError) -> Int {
        let text = try value(for: flag)
        guard let number = Int(text), number >= minimum else {
            throw UsageError(message: "\(flag) wants a whole number >= \(minimum), got '\(text)'")
        }
        return number
    }
    while index < arguments.count {
        let argument = arguments[index]
        switch argument {
        case "--root":
            options.root = try value(for: argument)
            rootGiven = true
        case "--port":
            options.port = try number(for: argument, minimum: 0)
            guard options.port <= 65_535 else { throw UsageError(message: "--port must be at most 65535") }
        case "--port-file":
            options.portFile = try value(for: argument)
        case "--cut-after":
            options.cutAfter = try number(for: argument, minimum: 0)
        case "--cut-path":
            options.cutPath = try value(for: argument)
        case "--rate":
            options.rate = try number(for: argument, minimum: 1)
        case "--hold-after":
            options.holdAfter = try number(for: argument, minimum: 0)
        default:
            throw UsageError(message: "unknown argument '\(argument)'")
        }
        index += 1
    }
    guard rootGiven else { throw UsageError(message: "--root DIR is required") }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: options.root, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw UsageError(message: "--root '\(options.root)' is not a directory")
    }
    if options.cutPath != nil && options.cutAfter == nil {
        throw UsageError(message: "--cut-path needs --cut-after")
    }
    return options
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
}

let options: Options
do {
    options = try parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    printError(error.message)
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}

// Signals are turned into stream elements, so the main flow can simply wait for the first one.
// They are ignored first so that the default action (dying on the spot) never runs.
let (signals, signalContinuation) = AsyncStream.makeStream(of: Int32.self)
let signalSources = [SIGTERM, SIGINT].map { signalNumber in
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
    source.setEventHandler { signalContinuation.yield(signalNumber) }
    source.resume()
    return source
}

let server: TestHTTPServer
do {
    server = try await TestHTTPServer.start(port: options.port)
} catch {
    printError("cannot listen on 127.0.0.1:\(options.port): \(error)")
    exit(1)
}
server.serveDirectory(options.root)
// --rate throttles everything; --hold-after stalls every response after that many body bytes, keeping the
// connection open (a transfer caught in the middle at a known byte, however slow the machine); --cut-after
// cuts the first response of --cut-path, or of every path when no --cut-path is given (default faults are
// counted per path).
let throttle = Faults(bytesPerSecond: options.rate, holdAfterBytes: options.holdAfter)
if let cutAfter = options.cutAfter {
    var cutting = throttle
    cutting.cutAfterBytes = cutAfter
    cutting.cutResponses = 1
    if let cutPath = options.cutPath {
        server.setDefaultFaults(throttle)
        server.setFaults(cutPath, cutting)
    } else {
        server.setDefaultFaults(cutting)
    }
} else {
    server.setDefaultFaults(throttle)
}

if let portFile = options.portFile {
    do {
        // Atomic, so a reader polling for the file never sees it half written.
        try String(server.port).write(toFile: portFile, atomically: true, encoding: .utf8)
    } catch {
        printError("cannot write --port-file '\(portFile)': \(error)")
        try? await server.shutdown()
        exit(1)
    }
}
// FileHandle writes are unbuffered, so the line is out before anyone waits for it.
FileHandle.standardOutput.write(Data("listening on \(server.baseURL)\n".utf8))

var received: Int32 = 0
for await signalNumber in signals {
    received = signalNumber
    break
}
for source in signalSources { source.cancel() }
do {
    try await server.shutdown()
} catch {
    printError("shutdown failed: \(error)")
    exit(1)
}
FileHandle.standardOutput.write(Data("stopped (signal \(received))\n".utf8))
exit(0)
