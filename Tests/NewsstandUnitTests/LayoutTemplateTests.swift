import Foundation
import Testing

@testable import NewsstandCore

/// Layout templates: what they render to, what they refuse, and that no value can lead out of the library.
@Suite(.timeLimit(.minutes(1))) struct LayoutTemplateTests {
    static let date = IssueDate(year: 2026, month: 11, day: 20)!

    func values(title: String, publication: String = "Podcast") -> LayoutTemplate.Values {
        LayoutTemplate.Values(publication: publication, title: title, name: title, date: Self.date)
    }

    @Test func rendersTheDoneWhenExample() throws {
        let template = try LayoutTemplate("{publication}/{date} {title}.{ext}")
        let place = template.render(values(title: "Title"))
        #expect(place.folder == "Podcast")
        #expect(place.stem == "2026-11-20 Title")
    }

    @Test func nestedFoldersAndDateParts() throws {
        let template = try LayoutTemplate("{publication}/{year}/{month}-{day} {title}")
        let place = template.render(values(title: "T"))
        #expect(place.folder == "Podcast/2026")
        #expect(place.stem == "11-20 T")
    }

    @Test func laterAttemptsCountOrAddASuffix() throws {
        let counted = try LayoutTemplate("{publication}/{title} {n}.{ext}")
        #expect(counted.render(values(title: "T"), attempt: 1).stem == "T 1")
        #expect(counted.render(values(title: "T"), attempt: 3).stem == "T 3")
        let plain = try LayoutTemplate("{publication}/{title}.{ext}")
        #expect(plain.render(values(title: "T"), attempt: 2).stem == "T (2)")
    }

    @Test(arguments: [
        "{title}", "/abs/{title}", "{publication}//{title}", "../{title}/x", "{publication}/../x", "./x/{title}",
        "{publication}/{bogus}", "{publication}/{title", "{publication}/title}", "{ext}/{title}", "{publication}/",
        "", "{publication}/{title}.{ext}.bak",
    ])
    func refusesTemplatesThatCouldLeaveOrMeanNothing(_ text: String) {
        #expect(throws: NewsstandError.self) { try LayoutTemplate(text) }
    }

    @Test(arguments: ["../../x", "/etc/passwd", "..", ".", "CON", "a:b?c", "trailing dots...", "", "a/b/../../c"])
    func hostileValuesStayOneComponentEach(_ hostile: String) throws {
        let template = try LayoutTemplate("{publication}/{title}.{ext}")
        let place = template.render(values(title: hostile, publication: hostile))
        for part in (place.folder + "/" + place.stem).split(separator: "/", omittingEmptySubsequences: false) {
            let part = String(part)
            #expect(SafePathComponent(validating: part) != nil, "\(hostile.debugDescription) gave \(part.debugDescription)")
            #expect(PortableNameTests.isPortable(part), "\(part.debugDescription)")
        }
        #expect(place.folder.split(separator: "/").count == 1)
    }

    @Test func theTopFolderIsNeverTheLibrarysOwnFile() throws {
        let template = try LayoutTemplate("{publication}/{title}")
        #expect(template.render(values(title: "t", publication: "library.json")).folder == "_library.json")
        #expect(template.render(values(title: "t", publication: "config.json")).folder == "_config.json")
    }

    @Test func extensionFromTheURLElseTheContentType() throws {
        let bare = AssetDownload(id: "1", url: try #require(URL(string: "http://h/media/8f3a2c")))
        #expect(FileNaming.filedName(stem: "2026-11-20 Title", for: bare, contentType: "audio/mpeg") == "2026-11-20 Title.mp3")
        #expect(FileNaming.filedName(stem: "s", for: bare, contentType: "Audio/MP4; charset=x") == "s.m4a")
        #expect(FileNaming.filedName(stem: "s", for: bare, contentType: "application/octet-stream") == "s")
        #expect(FileNaming.filedName(stem: "s", for: bare, contentType: nil) == "s")
        let named = AssetDownload(id: "2", url: try #require(URL(string: "http://h/ep1.OGG?sig=1")))
        #expect(FileNaming.filedName(stem: "s", for: named, contentType: "audio/mpeg") == "s.ogg")
        var cover = AssetDownload(id: "3", url: try #require(URL(string: "http://h/art.jpg")))
        cover.role = .cover
        #expect(FileNaming.filedName(stem: "s", for: cover, contentType: nil) == "s-cover.jpg")
    }

    @Test func oneMediaTypeTable() {
        #expect(MediaTypes.type(ofFileNamed: "a.mp3") == "audio/mpeg")
        #expect(MediaTypes.fileExtension(forContentType: "audio/mpeg") == "mp3")
        #expect(MediaTypes.fileExtension(forContentType: "image/jpeg") == "jpg")
        #expect(MediaTypes.fileExtension(forContentType: "application/pdf") == "pdf")
        #expect(MediaTypes.fileExtension(of: ".bashrc") == nil)
    }
}
