import Foundation
import Newsstand
import NewsstandCore

/// One issue: its cover, assets with their states and errors, its files (read or played in the browser),
/// and the actions.
enum IssuePageView {
    static func render(
        _ issue: Issue, key: String, directory: String, isRead: Bool, files: [String], nonce: String, csrf: String
    ) -> String {
        let name = HTML.escape(issue.name)
        let assets = issue.assets.map { asset in
            let expected = asset.expectedBytes.map { ByteFormat.binary($0) } ?? "?"
            let error = asset.error.map { "<p class=\"error\">error: \(HTML.escape($0))</p>" } ?? ""
            let file = asset.fileName.map { fileName in
                SafePath.resolve([Substring(fileName)], inside: directory) == nil
                    ? "" : " <a href=\"\(fileURL(key: key, relative: fileName))\">open \(HTML.escape(fileName))</a>"
            } ?? ""
            let progress = asset.state == .downloading || asset.state == .pending
                ? "<progress aria-label=\"Download of \(HTML.escape(asset.fileName ?? asset.url.lastPathComponent))\" value=\"\(asset.receivedBytes)\" max=\"\(max(asset.expectedBytes ?? 1, 1))\"></progress>" : ""
            return """
                <li class="asset" data-asset="\(HTML.escape(asset.id))" data-state="\(asset.state.rawValue)">\
                <span class="state badge \(asset.state.rawValue)">\(asset.state.rawValue)</span> \
                <span class="url">\(HTML.escape(asset.url.absoluteString))</span> \
                <span class="bytes">\(ByteFormat.binary(asset.receivedBytes)) / \(expected)</span>\(file)\(progress)\(error)</li>
                """
        }.joined(separator: "\n")
        let fileItems = files.map { relative -> String in
            let url = fileURL(key: key, relative: relative)
            let type = ContentType.of(path: relative)
            var item = "<li><a href=\"\(url)\">\(HTML.escape(relative))</a>"
            if ContentType.isAudio(type) {
                item += "<audio controls preload=\"none\" src=\"\(url)\" aria-label=\"\(HTML.escape(relative))\"></audio>"
            } else if ContentType.isVideo(type) {
                item += "<video controls preload=\"none\" src=\"\(url)\" aria-label=\"\(HTML.escape(relative))\"></video>"
            }
            return item + "</li>"
        }.joined(separator: "\n")
        let csrfField = HTML.csrfField(csrf)
        func action(_ path: String, _ label: String, _ extra: String = "") -> String {
            "<form method=\"post\" action=\"/issues/\(key)/\(path)\">\(csrfField)<button type=\"submit\"\(extra)>\(label)</button></form>"
        }
        let needsDownload = issue.assets.contains { !$0.isComplete }
        var actions = [String]()
        if needsDownload {
            actions.append(action("download", issue.status == .failed || issue.assets.contains { $0.receivedBytes > 0 } ? "Resume download" : "Download"))
        }
        actions.append(issue.isPinned ? action("unpin", "Unpin") : action("pin", "Pin"))
        actions.append(isRead ? action("unread", "Mark new") : action("read", "Mark read"))
        actions.append("<a class=\"button danger\" href=\"/issues/\(key)/remove\">Remove…</a>")
        let body = """
            <article class="issue" data-key="\(key)" data-status="\(issue.status.rawValue)">
            <img class="big-cover" src="/covers/\(key)?size=1024" alt="Cover of \(name)" width="256" height="341">
            <div class="details">
            <h1>\(name)</h1>
            <dl>
            <dt>Date</dt><dd>\(issue.date.description)</dd>
            <dt>Publication</dt><dd>\(HTML.escape(issue.publicationName))</dd>
            <dt>Status</dt><dd class="status">\(issue.status.rawValue)\(issue.isPinned ? ", pinned" : "")\(isRead ? "" : ", new")</dd>
            <dt>Folder</dt><dd class="folder">\(HTML.escape(directory))</dd>
            </dl>
            <div class="actions">\(actions.joined())</div>
            </div>
            </article>
            <h2>Assets</h2>
            <ul class="assets">\(assets.isEmpty ? "<li>No assets.</li>" : assets)</ul>
            <h2>Files</h2>
            <ul class="files">\(fileItems.isEmpty ? "<li>No files yet.</li>" : fileItems)</ul>
            """
        return HTML.page(title: issue.name, nonce: nonce, csrf: csrf, current: "", body: body)
    }

    static func confirmRemoval(_ issue: Issue, key: String, nonce: String, csrf: String) -> String {
        let body = """
            <h1>Remove \(HTML.escape(issue.name))?</h1>
            <p>Its folder and every downloaded file of it are deleted. This cannot be undone.</p>
            <form method="post" action="/issues/\(key)/remove">\(HTML.csrfField(csrf))<button type="submit" class="danger">Remove</button> <a href="/issues/\(key)">Cancel</a></form>
            """
        return HTML.page(title: "Remove", nonce: nonce, csrf: csrf, current: "", body: body)
    }

    /// The URL of a file inside the issue's folder, each component percent-encoded.
    static func fileURL(key: String, relative: String) -> String {
        "/files/\(key)/" + relative.split(separator: "/").map { Form.encode(String($0)) }.joined(separator: "/")
    }

    /// Up to `limit` regular files under `directory`, relative, sorted; hidden files are left out.
    /// The files of `issue` in `directory`: its whole folder, or a filed issue's own files only (the folder it
    /// shares holds other issues').
    static func files(of issue: Issue, in directory: String, limit: Int = 500) -> [String] {
        guard issue.isFiled else { return files(in: directory, limit: limit) }
        let own = Set(issue.filedNames)
        return files(in: directory, limit: limit).filter(own.contains)
    }

    static func files(in directory: String, limit: Int = 500) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: [String] = []
        while let next = enumerator.nextObject() as? String, found.count < limit {
            if next.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            if SafePath.resolve(next.split(separator: "/"), inside: directory) != nil { found.append(next) }
        }
        return found.sorted()
    }
}
