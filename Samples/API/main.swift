import Foundation
import Newsstand

// Adds today's issue of a daily with one asset, downloads it, and says where the file went.
// Usage: api-sample LIBRARY-FOLDER ASSET-URL. Exits 1 when the download failed.
let arguments = CommandLine.arguments
guard arguments.count == 3, let assetURL = URL(string: arguments[2]) else {
    print("usage: api-sample LIBRARY-FOLDER ASSET-URL")
    exit(64)
}
let today = IssueDate(Date())  // the day in UTC
let name = "The Daily \(today)"

do {
    // The library is shut down when the closure ends, also when it throws.
    let failed = try await Library.withLibrary(at: URL(fileURLWithPath: arguments[1])) { library in
        // A second run finds the issue and downloads whatever is still missing.
        if try await library.issue(named: name) == nil {
            try await library.addIssue(named: name, date: today, assets: [AssetRequest(url: assetURL)])
        }
        // The run lasts while the closure reads its events; breaking out of the loop stops it.
        let summary = try await library.download(issues: [name]) { events in
            for await event in events {
                switch event.kind {
                case .finished(let asset): print("downloaded \(asset.fileURL?.path ?? "?")")
                case .failed(let error): print("error: \(error.localizedDescription)")
                default: break
                }
            }
        }
        return summary.failed.count
    }
    exit(failed == 0 ? 0 : 1)
} catch {
    print("error: \(error.localizedDescription)")
    exit(1)
}
