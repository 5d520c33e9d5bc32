import Foundation
import NewsstandCatalog
import NewsstandDownload

extension Library {
    /// Reconciles the catalog with itself and with the disk: interrupted changes, the index against the
    /// records, the saved downloads and folder claims against the issues, stale temporaries, content
    /// folders, orphans. Holds the catalog lock while it runs (a consistent view; writers wait).
    /// - Parameter repair: Fix what the library owns. Orphans are only listed.
    /// - Returns: Every problem found, each marked repaired or not.
    /// - Throws: `.manifestUnreadable` naming a damaged record (records are the source of truth and are
    ///   never rewritten by a repair).
    public func verify(repair: Bool = false) async throws -> VerifyReport {
        try await verify(issues: nil, options: VerifyOptions(repair: repair))
    }

    /// Reconciles the catalog with itself and with the disk (see ``VerifyReport/Problem/Kind``): the
    /// catalog's own structure, every issue's content against what its assets placed (sizes recorded at
    /// placing time; checksums with `deep`), the library's own leftover files, and orphans.
    ///
    /// Holds the catalog lock while it runs (a consistent view; writers wait). Issues with a download or
    /// unpack in flight (in any process) are skipped, never reported or repaired half-way.
    /// - Parameters:
    ///   - names: Only check the content of these issues (the catalog's structure is always checked);
    ///     nil for every issue.
    ///   - options: Whether to repair, delete orphans, hash files.
    /// - Returns: Every problem found, each marked repaired or not.
    /// - Throws: `.issueNotFound` for an unknown name (before anything is changed), `.manifestUnreadable`
    ///   naming a damaged record.
    public func verify(issues names: [String]?, options: VerifyOptions) async throws -> VerifyReport {
        let catalog = self.catalog
        let layout = self.layout
        return try await runBlocking {
            try catalog.withLock {
                let verifier = CatalogVerifier(catalog: catalog, layout: layout, options: options, names: names)
                _ = try verifier.run()
                // The subscriptions' files are a layer above the catalog: checked here, after its checks.
                verifier.checkSubscriptions()
                return verifier.report
            }
        }
    }
}
