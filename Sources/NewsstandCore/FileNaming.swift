import Foundation

/// Chooses the file name a downloaded asset gets in its issue's folder: from `Content-Disposition`,
/// else the URL's last path component, always one safe component.
package enum FileNaming {
    package static func name(for asset: AssetDownload, contentDisposition: String?) -> String {
        let fallback = "asset-\(asset.id)"
        if let header = contentDisposition, let name = fileName(fromContentDisposition: header) {
            return SafePathComponent(sanitizing: name, fallback: fallback).value
        }
        let last = asset.url.lastPathComponent
        if !last.isEmpty, last != "/" {
            return SafePathComponent(sanitizing: last, fallback: fallback).value
        }
        return fallback
    }

    /// The name of a filed issue's file (``Issue/fileStem``): the stem recorded when the issue was added, and the
    /// extension of the URL's path, else of the response's `Content-Type`, else none. The feed's image of the
    /// item (a cover asset) takes `<stem>-cover`, so it never takes the content's name.
    package static func filedName(stem: String, for asset: AssetDownload, contentType: String?) -> String {
        let base = asset.role == .cover ? "\(stem)-cover" : stem
        let ext = MediaTypes.fileExtension(of: asset.url.lastPathComponent)
            ?? contentType.flatMap(MediaTypes.fileExtension(forContentType:))
        guard let ext else { return SafePathComponent(sanitizing: base, fallback: "asset-\(asset.id)").value }
        // The stem is shortened, not the extension, when the whole would pass the cap.
        let tail = "." + ext.lowercased()
        var head = SafePathComponent(sanitizing: base, fallback: "asset-\(asset.id)").value
        while head.utf8.count + tail.utf8.count > SafePathComponent.maxUTF8Length { head.removeLast() }
        return head + tail
    }

    /// `filename*=UTF-8''…` (RFC 6266/8187) wins over `filename="…"`.
    static func fileName(fromContentDisposition header: String) -> String? {
        var plain: String?
        for part in header.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if key == "filename*" {
                let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3, pieces[0].lowercased() == "utf-8",
                    let decoded = String(pieces[2]).removingPercentEncoding
                {
                    return decoded
                }
            } else if key == "filename" {
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                }
                plain = value
            }
        }
        // A name may still carry a path from a careless server: keep only its last component. Split by hand:
        // corelibs-foundation's `NSString.lastPathComponent` traps on some values, such as `///a//`.
        return plain?.unicodeScalars.split(separator: "/").last.map { String($0) }
    }

    /// `report.pdf` → `report (2).pdf`.
    /// The result stays within `SafePathComponent.maxUTF8Length`: the stem is shortened to make room.
    package static func withSuffix(_ name: String, _ n: Int) -> String {
        var ext = (name as NSString).pathExtension
        if ext.utf8.count > 16 { ext = "" }  // not a real extension; treat the whole name as the stem
        var stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
        let tail = " (\(n))" + (ext.isEmpty ? "" : ".\(ext)")
        while !stem.isEmpty, stem.utf8.count + tail.utf8.count > SafePathComponent.maxUTF8Length { stem.removeLast() }
        if stem.isEmpty { stem = "file" }
        return stem + tail
    }
}
