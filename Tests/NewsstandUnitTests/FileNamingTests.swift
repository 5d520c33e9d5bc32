import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

@Suite(.timeLimit(.minutes(5))) struct FileNamingTests {
    @Test(arguments: [
        String(repeating: "n", count: 120), String(repeating: "é", count: 60) + ".pdf",
        "x." + String(repeating: "e", count: 117), "a.pdf",
    ])
    func clashSuffixKeepsNamesSafe(_ name: String) {
        let safe = SafePathComponent(sanitizing: name).value
        for n in [2, 10, 12345] {
            let suffixed = FileNaming.withSuffix(safe, n)
            #expect(suffixed.utf8.count <= SafePathComponent.maxUTF8Length, "\(suffixed)")
            #expect(SafePathComponent(validating: suffixed) != nil, "\(suffixed)")
            #expect(suffixed.contains("(\(n))"))
        }
        #expect(FileNaming.withSuffix("report.pdf", 2) == "report (2).pdf")
    }

    @Test func contentDispositionNames() {
        #expect(FileNaming.fileName(fromContentDisposition: "attachment; filename=\"a b.pdf\"") == "a b.pdf")
        #expect(
            FileNaming.fileName(
                fromContentDisposition: "attachment; filename*=UTF-8''%E6%9D%B1.txt; filename=\"x.txt\"") == "東.txt")
        #expect(FileNaming.fileName(fromContentDisposition: "attachment; filename=\"../../etc/passwd\"") == "passwd")
        #expect(FileNaming.fileName(fromContentDisposition: "inline") == nil)
    }
}
