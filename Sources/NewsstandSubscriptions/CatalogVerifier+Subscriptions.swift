import Foundation
import NewsstandCore
import NewsstandCatalog

/// The subscriptions' files: every record readable, no temporary a killed writer left, no last-checked
/// status of a subscription that is gone.
extension CatalogVerifier {
    package func checkSubscriptions() {
        let store = SubscriptionStore(layout: layout)
        var ids = Set<String>()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: layout.subscriptions)) ?? [] {
            let path = "\(layout.subscriptions)/\(name)"
            if LibraryLayout.isTemporary(name) {
                note(.staleTemporaryFile, path, "a temporary subscription record left by a killed writer") {
                    try POSIX.unlinkIfPresent(path)
                }
                continue
            }
            guard name.hasSuffix(".json") else { continue }
            let id = String(name.dropLast(5))
            ids.insert(id)
            do {
                _ = try store.load(id)
            } catch {
                note(.damagedSubscription, path, "the subscription record cannot be read: \(error)")
            }
        }
        // The service's lock and PID live beside the statuses: deleting a lock a running service holds would
        // let a second one start.
        let serviceFiles: Set<String> = [layout.serviceLock, layout.servicePID]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: layout.syncStatus)) ?? []
        where !ids.contains(name.hasSuffix(".json") ? String(name.dropLast(5)) : name) {
            let path = "\(layout.syncStatus)/\(name)"
            guard !serviceFiles.contains(path) else { continue }
            note(.staleFile, path, "the last-checked status of a subscription that is gone") {
                try POSIX.unlinkIfPresent(path)
            }
        }
    }
}
