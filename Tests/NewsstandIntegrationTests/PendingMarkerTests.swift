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

/// The saved download list (the catalog's `pending` table): what a damaged or hand-edited list holds.
@Suite(.timeLimit(.minutes(5))) struct PendingMarkerTests {
    @Test func savedDownloadsPointingNowhereAreDroppedByRepair() async throws {
        try await withTemporaryDirectory { root in
            let library = try await Library.open(at: root)
            let layout = LibraryLayout(root: root.path)
            try SQLiteShell.run(
                layout.database,
                "INSERT INTO pending (asset_id, issue_key) VALUES ('00000000deadbeef', '\(Catalog.key(for: "nothing"))')")
            let report = try await library.verify()
            #expect(report.problems.map(\.kind) == [.stalePendingDownload])
            #expect(try await library.verify(repair: true).isClean)
            #expect(try await library.verify().problems.isEmpty)
            #expect(try library.catalog.pendingMarkers().isEmpty)
        }
    }
}
