import Foundation

/// Where an issue's files are: a folder of its own (the default), or files named by a layout template in a
/// folder shared with other issues (``Issue/fileStem``). Everything that finds, locks, claims or removes an
/// issue's files asks here, so both kinds follow the recorded location.
extension Issue {
    /// Whether the issue was filed by a layout template (its files share a folder with other issues').
    public var isFiled: Bool { fileStem != nil }

    /// The name the catalog claims for the issue, unique case-insensitively: its folder, or for a filed issue
    /// its folder and file stem (`Podcast/2026-11-20 Title`).
    package var claimName: String { fileStem.map { "\(folderName)/\($0)" } ?? folderName }

    /// The name of the issue's lock file in `.staging`: its folder's name, or for a filed issue its claim
    /// with `\` for `/` (one component; `\` never occurs in a sanitised name, so it cannot meet a folder's).
    package var lockName: String { Issue.lockName(folder: folderName, stem: fileStem) }

    package static func lockName(folder: String, stem: String?) -> String {
        guard let stem else { return folder }
        return "\(folder)/\(stem)".replacingOccurrences(of: "/", with: "\\")
    }

    /// The sidecar's name: `issue.json` in an issue's own folder, `<stem>.issue.json` beside a filed issue's
    /// files.
    package var sidecarName: String {
        fileStem.map { "\($0).\(LibraryLayout.issueSidecar)" } ?? LibraryLayout.issueSidecar
    }

    /// The names in ``folderName`` that are this filed issue's own: its placed files and its sidecar. Empty for
    /// an issue with a folder of its own (the whole folder is its own).
    package var filedNames: [String] {
        guard isFiled else { return [] }
        return assets.compactMap(\.fileName) + [sidecarName]
    }

    /// Whether `folder` (from a record) is a safe place for a filed issue: one or more safe components, none
    /// reserved at the top.
    package static func isSafeFiledFolder(_ folder: String) -> Bool {
        let parts = folder.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let top = parts.first, !LibraryLayout.isReserved(top), !LibraryLayout.isLibraryFile(top) else {
            return false
        }
        return parts.allSatisfy { SafePathComponent(validating: $0) != nil }
    }
}
