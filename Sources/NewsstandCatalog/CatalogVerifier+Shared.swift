import Foundation
import NewsstandCore

/// `verify`'s check of the folders that issues filed by a layout template share: each issue's own check
/// leaves them alone (its neighbours' files are not its orphans), so here the folder is checked against all of
/// its issues at once.
extension CatalogVerifier {
    func checkSharedFolders(of issues: [String: Issue]) {
        var owners: [String: [Issue]] = [:]
        for issue in issues.values where issue.isFiled { owners[issue.folderName, default: []].append(issue) }
        let folders = Set(owners.keys)
        for (folder, filed) in owners.sorted(by: { $0.key < $1.key }) {
            // An issue in flight or being removed may be placing or taking its files right now.
            if filed.contains(where: { $0.isBeingRemoved || isInFlight($0) }) { continue }
            var owned = Set<String>()
            for issue in filed {
                owned.formUnion(IssueContent.paths(of: issue, layout: layout).map { ($0 as NSString).lastPathComponent })
            }
            let path = layout.contentFolder(folder)
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
            where !name.hasPrefix(".") && !owned.contains(name)
                // A folder of other filed issues below this one (`Podcast/2026` under `Podcast`) is theirs.
                && !folders.contains(where: { $0 == "\(folder)/\(name)" || $0.hasPrefix("\(folder)/\(name)/") })
            {
                noteOrphan("\(path)/\(name)", "no issue filed in \(folder.debugDescription) placed \(name.debugDescription)")
            }
        }
    }
}
