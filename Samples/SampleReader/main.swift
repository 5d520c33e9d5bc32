// sample-reader: the shortest real example of embedding Newsstand in an app.
//
//   sample-reader LIBRARY_DIR CATALOG_JSON BASE_URL [ISSUE_NAME]
//
// Opens (or creates) the library at LIBRARY_DIR, adds one issue from the publisher's catalog.json
// (the first one unless ISSUE_NAME is given; asset paths are joined to BASE_URL), downloads it while
// printing the download events, then lists the files of the issue's content folder.

import Foundation
import Newsstand

/// The part of the sample publisher's `catalog.json` this reader needs.
struct Catalog: Decodable {
    struct Publication: Decodable {
        var title: String
        var issues: [CatalogIssue]
    }
    struct CatalogIssue: Decodable {
        var name: String
        var date: String
        var assets: [Asset]
    }
    struct Asset: Decodable {
        var path: String
        var sha256: String
        var unpack: Bool
    }
    var publications: [Publication]
}

/// Prints `error: message` on stderr and exits: 64 (EX_USAGE) for bad arguments, 1 for failures.
func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard (3...4).contains(arguments.count) else {
    fail("expected LIBRARY_DIR CATALOG_JSON BASE_URL [ISSUE_NAME], got \(arguments.count) argument(s)", status: 64)
}
let libraryURL = URL(fileURLWithPath: arguments[0], isDirectory: true)
let catalog: Catalog
do {
    catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[1])))
} catch {
    fail("cannot read the catalog \(arguments[1]): \(error.localizedDescription)", status: 64)
}
guard let baseURL = URL(string: arguments[2]), ["http", "https"].contains(baseURL.scheme ?? ""), baseURL.host != nil
else {
    fail("BASE_URL must be an http or https URL, got '\(arguments[2])'", status: 64)
}
let entries = catalog.publications.flatMap(\.issues)
guard let entry = arguments.count == 4 ? entries.first(where: { $0.name == arguments[3] }) : entries.first else {
    fail("no issue named '\(arguments.count == 4 ? arguments[3] : "")' in \(arguments[1])", status: 64)
}
guard let date = IssueDate(entry.date) else {
    fail("the catalog gives '\(entry.name)' the date '\(entry.date)', which is not YYYY-MM-DD", status: 64)
}

do {
    // The library is shut down when the closure ends, whatever happens in it.
    let failures = try await Library.withLibrary(at: libraryURL) { library in
        // Adding is a one-time step; a second run of the sample downloads whatever is still missing.
        if try await library.issue(named: entry.name) == nil {
            let requests = entry.assets.map {
                AssetRequest(url: baseURL.appendingPathComponent($0.path), sha256: $0.sha256, unpack: $0.unpack)
            }
            try await library.addIssue(named: entry.name, date: date, assets: requests)
            print("added \(entry.name) (\(entry.date)), \(requests.count) asset(s)")
        }

        var lastReported: [String: Int64] = [:]
        let summary = try await library.download(issues: [entry.name]) { events in
            for await event in events {
                let file = event.url.lastPathComponent
                switch event.kind {
                case .started(let from, let expected):
                    let size = expected.map { " of \($0) bytes" } ?? ""
                    print(from > 0 ? "resuming \(file) at byte \(from)\(size)" : "started \(file)\(size)")
                case .progress(let received, let expected, _):
                    // Events come a few times a second; print one line per MiB.
                    if received - lastReported[event.assetID, default: 0] >= 1 << 20 {
                        lastReported[event.assetID] = received
                        print("progress \(file): \(received) / \(expected.map(String.init) ?? "?") bytes")
                    }
                case .retrying(let attempt, _, let reason):
                    print("retrying \(file) (attempt \(attempt + 1)): \(reason)")
                case .unpacking:
                    print("unpacking \(file)")
                case .finished(let asset):
                    print("finished \(file): \(asset.state.rawValue), \(asset.receivedBytes) bytes")
                case .failed(let error):
                    print("failed \(file): \(error.localizedDescription)")
                case .skipped(let reason):
                    print("skipped \(file): \(reason)")
                }
            }
        }

        let folder = try await library.contentURL(forIssueNamed: entry.name)
        let status = try await library.issue(named: entry.name)?.status.rawValue ?? "missing"
        print("\(entry.name) is \(status) in \(folder.path)")
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        for file in files.sorted() {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: folder.appendingPathComponent(file).path, isDirectory: &isFolder), !isFolder.boolValue
            {
                print("  \(file)")
            }
        }
        return summary.failed.count
    }
    if failures > 0 { exit(1) }
} catch {
    fail("\(error)")
}
