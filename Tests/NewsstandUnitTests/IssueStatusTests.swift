import Foundation
import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

@Suite(.timeLimit(.minutes(5))) struct IssueStatusTests {
    func asset(_ state: AssetDownload.State, archive: Bool? = nil, id: String = UUID().uuidString) -> AssetDownload {
        var asset = AssetDownload(id: id, url: URL(fileURLWithPath: "/x"))
        asset.state = state
        asset.isArchive = archive
        return asset
    }

    @Test func statusFollowsAssets() {
        #expect(Issue.status(of: []) == .none)
        #expect(Issue.status(of: [asset(.pending)]) == .none)
        #expect(Issue.status(of: [asset(.downloading)]) == .downloading)
        #expect(Issue.status(of: [asset(.downloaded), asset(.pending)]) == .downloading)
        #expect(Issue.status(of: [asset(.downloaded), asset(.unpacked)]) == .available)
        #expect(Issue.status(of: [asset(.downloaded), asset(.failed)]) == .failed)
        // A downloaded archive that is not unpacked yet is not available.
        #expect(Issue.status(of: [asset(.downloaded, archive: true)]) == .downloading)
    }
}
