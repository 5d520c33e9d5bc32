import Foundation
import NewsstandTestSupport
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

#if canImport(Glibc)
    import Glibc
#endif

/// The saved download list (`.catalog/pending`): markers as links to one anchor per issue, version 2's
/// symlinks, and what kills and hostile files leave there.
@Suite(.timeLimit(.minutes(5))) struct PendingMarkerTests {
    let date = IssueDate("2026-11-20")!

    func catalog(_ root: URL) throws -> Catalog {
        let catalog = Catalog(layout: LibraryLayout(root: root.path), durable: false)
        try catalog.prepare(create: true)
        return catalog
    }

    @Test func savedDownloadsPointingNowhereAreDroppedByRepair() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let layout = LibraryLayout(root: root.path)
            try FileManager.default.createSymbolicLink(
                atPath: layout.pendingMarker("00000000deadbeef"), withDestinationPath: Catalog.key(for: "nothing"))
            let report = try await library.verify()
            #expect(report.problems.map(\.kind) == [.stalePendingDownload])
            #expect(try await library.verify(repair: true).isClean)
            #expect(try await library.verify().problems.isEmpty)
        }
    }

    @Test func savedDownloadsAreLinksToOneAnchorPerIssueGoneWithTheLast() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root)
            let layout = LibraryLayout(root: root.path)
            let ids = ["00000000000000a1", "00000000000000a2", "00000000000000a3"]
            try catalog.write { changes in
                for id in ids { changes.markPending(id, issueNamed: "The Daily") }
                changes.markPending("00000000000000b1", issueNamed: "The Weekly")
            }
            let daily = Catalog.key(for: "The Daily")
            let saved = try catalog.pendingMarkers()
            #expect(saved.map(\.id) == ids + ["00000000000000b1"])
            #expect(saved.map(\.key) == [daily, daily, daily, Catalog.key(for: "The Weekly")])
            // One file for each issue: every marker of The Daily is a name of its anchor.
            let anchor = "\(layout.pending)/\(Catalog.anchorPrefix)\(daily)"
            var info = stat()
            #expect(lstat(anchor, &info) == 0 && info.st_nlink == 4)
            // A marker an earlier version made (a symlink to the key) is read beside them.
            try FileManager.default.createSymbolicLink(
                atPath: layout.pendingMarker("00000000000000c1"), withDestinationPath: daily)
            #expect(try catalog.pendingMarkers().count == 5)
            try catalog.write { changes in
                for id in ids.dropLast() { changes.clearPending(id) }
            }
            #expect(lstat(anchor, &info) == 0 && info.st_nlink == 2)
            try catalog.write { changes in
                changes.clearPending(ids[2])
                changes.clearPending("00000000000000c1")
                changes.clearPending("00000000000000b1")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: layout.pending).isEmpty)
        }
    }

    @Test func anchorsAreMendedNeverWrittenThroughAndSymlinkMarkersBecomeLinks() throws {
        try withTemporaryDirectorySync { root in
            let catalog = try catalog(root)
            let layout = LibraryLayout(root: root.path)
            let key = Catalog.key(for: "The Daily")
            let anchor = "\(layout.pending)/\(Catalog.anchorPrefix)\(key)"
            // A kill between the anchor's creation and its write left it empty.
            try Data().write(to: URL(fileURLWithPath: anchor))
            // A version-2 marker (a symlink) for one asset of the same issue.
            try FileManager.default.createSymbolicLink(
                atPath: layout.pendingMarker("00000000000000a1"), withDestinationPath: key)
            try catalog.write { changes in
                changes.markPending("00000000000000a1", issueNamed: "The Daily")
                changes.markPending("00000000000000a2", issueNamed: "The Daily")
            }
            #expect(try String(contentsOfFile: anchor, encoding: .utf8) == key)
            var info = stat()
            // The symlink became a link: the anchor counts both markers.
            #expect(lstat(layout.pendingMarker("00000000000000a1"), &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
            #expect(lstat(anchor, &info) == 0 && info.st_nlink == 3)
            #expect(try catalog.pendingMarkers().map(\.key) == [key, key])
            // An anchor with a second name outside the pending folder is replaced, not written through.
            try catalog.write { changes in
                changes.clearPending("00000000000000a1")
                changes.clearPending("00000000000000a2")
            }
            let outside = root.path + "/outside"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: outside))
            try FileManager.default.linkItem(atPath: outside, toPath: anchor)
            try catalog.write { changes in changes.markPending("00000000000000a3", issueNamed: "The Daily") }
            #expect(try String(contentsOfFile: outside, encoding: .utf8) == "keep")
            #expect(try catalog.pendingMarkers().map(\.key) == [key])
            let names = try FileManager.default.contentsOfDirectory(atPath: layout.pending).sorted()
            #expect(names == [Catalog.anchorPrefix + key, "00000000000000a3"].sorted(), "\(names)")
        }
    }

    @Test func aStrayAnchorIsRepairedAndAFIFOMarkerNeverBlocks() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let layout = LibraryLayout(root: root.path)
            try await library.addIssue(named: "A", date: date)
            try POSIX.makeDirectory(layout.pending)
            // A kill between the deletion of an issue's last marker and of its anchor left the anchor.
            let key = Catalog.key(for: "A")
            let anchor = "\(layout.pending)/\(Catalog.anchorPrefix)\(key)"
            try Data(key.utf8).write(to: URL(fileURLWithPath: anchor))
            #expect(mkfifo(layout.pendingMarker("00000000000000f1"), 0o644) == 0)
            let report = try await library.verify()
            #expect(report.problems.map(\.kind) == [.stalePendingDownload], "\(report.problems)")
            #expect(try await library.verify(repair: true).problems.count == 1)
            #expect(!FileManager.default.fileExists(atPath: anchor))
            #expect(try await library.verify().isClean)
        }
    }
}
