import Foundation

/// The free-space checks of downloads and unpacking (see ``FreeSpace``).
extension Library {
    /// Fails before unpacking when the archive's content cannot fit: its size from the ZIP central
    /// directory, else (formats that do not declare it up front) the archive's own size as a lower
    /// bound; the extraction itself also stops at the free space, for archives that under-declare.
    /// Blocking.
    /// - Throws: `.insufficientSpace` naming the asset, the issue, the size needed and the free space.
    static func checkSpaceToUnpack(
        _ archive: String, asset: AssetDownload, issueName: String, layout: LibraryLayout
    ) throws {
        guard let needed = ZipCentralDirectory.uncompressedSize(path: archive) ?? POSIX.fileSize(archive) else {
            return
        }
        if let figures = FreeSpace.shortfall(needing: needed, at: layout.staging) {
            throw NewsstandError(
                .insufficientSpace,
                FreeSpace.message(
                    "to unpack \(asset.url.absoluteString) into \(issueName.debugDescription)", needing: needed,
                    figures: figures, path: layout.root))
        }
    }
}
