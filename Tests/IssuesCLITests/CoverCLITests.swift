import Foundation
import NewsstandTestSupport
import Testing

/// `issues covers`, `show`'s cover and `verify`'s check through the built binary, and `kill -9` in the middle of
/// placing a cover (the debug build dies at the named point `cover-placing`, after one file is placed) or of
/// decoding one (`cover-decoding`: the cover worker dies as a decoder crashing on a hostile image would).
@Suite(.timeLimit(.minutes(5))) struct CoverCLITests {
    func run(_ args: [String], _ library: URL, crashAt point: String? = nil) throws -> CommandResult {
        try CommandRunner.issues(args, library: library, environment: point.map { ["ISSUES_CRASH_AT": $0] } ?? [:])
    }

    /// A one-page PDF, written by hand (its cross-reference table computed).
    static func pdf() -> [UInt8] {
        let content = "0 0 1 rg 100 300 400 400 re f\n"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            "<< /Length \(content.utf8.count) >>\nstream\n\(content)endstream",
        ]
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { text += String(format: "%010d 00000 n \n", offset) }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(text.utf8)
    }

    /// A whole JPEG: its start and end markers, nothing cut.
    func isWholeJPEG(_ url: URL) -> Bool {
        guard let data = try? Data(contentsOf: url), data.count > 4 else { return false }
        return data.prefix(2) == Data([0xFF, 0xD8]) && data.suffix(2) == Data([0xFF, 0xD9])
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func aKillWhilePlacingACoverNeverLeavesATornImage() async throws {
        try await withTestServer { server in
            server.serve("/issue.pdf", bytes: Self.pdf())
            try await withTemporaryDirectory { lib in
                #expect(try run(["add", "Killed", "--date", "2026-11-20", "--asset", server.url("/issue.pdf")], lib).status == 0)
                let download = try run(["download", "--no-covers"], lib)
                #expect(download.status == 0, "\(download.stderr)")
                let folder = lib.appendingPathComponent("Killed")
                #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("cover.jpg").path))

                let killed = try run(["covers", "Killed"], lib, crashAt: "cover-placing")
                #expect(killed.status != 0)
                // The kill landed after the first thumbnail was placed and before the cover: what is there is whole.
                let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                #expect(names.contains("cover-256.jpg") && !names.contains("cover.jpg"), "\(names)")
                for name in names where name.hasPrefix("cover") {
                    #expect(isWholeJPEG(folder.appendingPathComponent(name)), "\(name) is torn")
                }

                let again = try run(["covers", "Killed"], lib)
                #expect(again.status == 0, "\(again.stderr)")
                #expect(again.stdout.contains("cover.jpg from pdf"), "\(again.stdout)")
                for name in ["cover.jpg", "cover-256.jpg", "cover-1024.jpg"] {
                    #expect(isWholeJPEG(folder.appendingPathComponent(name)), "\(name)")
                }
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
            }
        }
    }

    /// Covers are made in a worker process: a worker that dies on an issue's images costs the issue its images
    /// (the placeholder, with the reason in `show`), not the command; the next `covers` uses them again.
    @Test func aWorkerThatDiesOnTheImagesLeavesThePlaceholderWithTheReason() async throws {
        try await withTestServer { server in
            server.serve("/issue.pdf", bytes: Self.pdf())
            try await withTemporaryDirectory { lib in
                for name in ["Crashed", "Next"] {
                    let added = try run(["add", name, "--date", "2026-11-20", "--asset", server.url("/issue.pdf")], lib)
                    #expect(added.status == 0, "\(added.stderr)")
                }
                #expect(try run(["download", "--no-covers"], lib).status == 0)
                let made = try run(["covers", "Crashed", "Next"], lib, crashAt: "cover-decoding")
                #expect(made.status == 0, "\(made.stderr)")
                for name in ["Crashed", "Next"] {
                    #expect(made.stdout.contains("\"\(name)\": cover.jpg from placeholder"), "\(made.stdout)")
                }
                #expect(made.stdout.contains("refused the issue's images stopped the cover maker (the worker ended by signal 9)"), "\(made.stdout)")
                let shown = try json(try run(["show", "Crashed", "--json"], lib).stdout)
                let cover = try #require(shown["cover"] as? [String: Any])
                #expect((cover["refused"] as? String)?.contains("signal 9") == true, "\(cover)")
                let folder = lib.appendingPathComponent("Crashed")
                for name in ["cover.jpg", "cover-256.jpg", "cover-1024.jpg"] {
                    #expect(isWholeJPEG(folder.appendingPathComponent(name)), "\(name)")
                }
                let again = try run(["covers", "--refresh", "Crashed"], lib)
                #expect(again.status == 0 && again.stdout.contains("cover.jpg from pdf"), "\(again.stdout)\(again.stderr)")
                let verify = try run(["verify"], lib)
                #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
            }
        }
    }

    /// A worker that dies between covers (after its answer, while idle) is replaced, and the next issue's cover
    /// is made from its images: only a worker that dies on an issue's own images gives it the placeholder.
    @Test func aWorkerGoneWhileIdleIsReplacedWithoutBlamingTheNextIssue() async throws {
        try await withTestServer { server in
            server.serve("/issue.pdf", bytes: Self.pdf())
            try await withTemporaryDirectory { lib in
                for name in ["First", "Second", "Third"] {
                    let added = try run(["add", name, "--date", "2026-11-20", "--asset", server.url("/issue.pdf")], lib)
                    #expect(added.status == 0, "\(added.stderr)")
                }
                #expect(try run(["download", "--no-covers"], lib).status == 0)
                let made = try run(["covers", "First", "Second", "Third"], lib, crashAt: "cover-replied")
                #expect(made.status == 0, "\(made.stderr)")
                for name in ["First", "Second", "Third"] {
                    #expect(made.stdout.contains("\"\(name)\": cover.jpg from pdf"), "\(made.stdout)")
                }
                #expect(!made.stdout.contains("refused"), "\(made.stdout)")
            }
        }
    }

    @Test func showNamesTheCoverAndVerifyRepairsIt() async throws {
        try await withTestServer { server in
            server.serve("/issue.pdf", bytes: Self.pdf())
            try await withTemporaryDirectory { lib in
                _ = try run(["add", "Shown", "--date", "2026-11-20", "--asset", server.url("/issue.pdf")], lib)
                #expect(try run(["download"], lib).status == 0)
                let shown = try json(try run(["show", "Shown", "--json"], lib).stdout)
                let cover = try #require(shown["cover"] as? [String: Any])
                #expect(cover["file"] as? String == "cover.jpg" && cover["source"] as? String == "pdf")
                #expect(cover["thumbnails"] as? [String: String] == ["256": "cover-256.jpg", "1024": "cover-1024.jpg"])
                #expect(try run(["show", "Shown"], lib).stdout.contains("cover:   cover.jpg (from pdf)"))

                // The sidecar says what the folder is.
                let folder = lib.appendingPathComponent("Shown")
                let sidecar = try json(String(decoding: try Data(contentsOf: folder.appendingPathComponent("issue.json")), as: UTF8.self))
                #expect(sidecar["name"] as? String == "Shown" && sidecar["sidecarVersion"] as? Int == 1)

                // A damaged cover is a problem; --repair makes it again.
                let thumbnail = folder.appendingPathComponent("cover-1024.jpg")
                try Data([0xFF, 0xD8, 0xFF]).write(to: thumbnail)
                let found = try run(["verify"], lib)
                #expect(found.status == 1 && found.stdout.contains("missingCover"), "\(found.stdout)")
                let repaired = try run(["verify", "--repair"], lib)
                #expect(repaired.status == 0, "\(repaired.stdout)\(repaired.stderr)")
                #expect(isWholeJPEG(thumbnail))

                // --refresh makes it again; --json names it.
                let output = try run(["covers", "--refresh", "--json"], lib).stdout
                let refreshed = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
                #expect(refreshed.first?["name"] as? String == "Shown" && refreshed.first?["cover"] != nil)

                // The covers go with the issue.
                #expect(try run(["remove", "Shown"], lib).status == 0)
                #expect(!FileManager.default.fileExists(atPath: folder.path))
            }
        }
    }
}
