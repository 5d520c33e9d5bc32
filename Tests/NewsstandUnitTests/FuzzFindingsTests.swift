import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

/// Inputs the libFuzzer targets in Fuzz/ found (each is also in that target's seed corpus), kept here so
/// that `make test` guards the fixes without a fuzzing toolchain.
@Suite(.timeLimit(.minutes(5))) struct FuzzFindingsTests {
    @Test(arguments: [
        "bytes 0-5/5", "bytes 0-0/0", "bytes 0-0/-2", "bytes -5-10/20", "bytes +1-+2/+3", "bytes */*", "bytes 1-/2",
        "bytes 0-9223372036854775808/9223372036854775809",
    ])
    func invalidContentRangeIsRefused(_ header: String) {
        #expect(ContentRange(header) == nil)
    }

    @Test func validContentRangeIsRead() {
        let full = ContentRange("bytes 0-499/1234")
        #expect(full?.start == 0 && full?.end == 499 && full?.total == 1234)
        let unsatisfied = ContentRange("bytes */1234")
        #expect(unsatisfied != nil && unsatisfied?.start == nil && unsatisfied?.total == 1234)
        let unknownTotal = ContentRange("bytes 42-1233/*")
        #expect(unknownTotal?.start == 42 && unknownTotal?.end == 1233 && unknownTotal?.total == nil)
    }

    /// corelibs-foundation's `NSString.lastPathComponent` trapped on this one.
    @Test func contentDispositionPathWithRepeatedSlashes() {
        #expect(FileNaming.fileName(fromContentDisposition: "attachment; filename=\"///a//\"") == "a")
        #expect(FileNaming.fileName(fromContentDisposition: "attachment; filename=\"///\"") == nil)
    }

    /// ". ." became ".", and a dot with a combining mark kept the name hidden.
    @Test(arguments: [". .", " . . ", ". . x", ".\u{301}x"])
    func leadingDotsAndSpacesGoTogether(_ name: String) {
        let value = SafePathComponent(sanitizing: name, fallback: "fallback").value
        #expect(value.utf8.first != UInt8(ascii: "."))
        #expect(SafePathComponent.isSafe(value))
    }

    @Test func dotWithCombiningMarkIsNotSafe() {
        #expect(!SafePathComponent.isSafe(".\u{301}x"))
    }

    /// corelibs-foundation's `DateFormatter` trapped on a letter with a combining mark.
    @Test func retryAfterOutsideASCIIIsIgnored() {
        #expect(RetryAfter.parse("M\u{5B5}") == nil)
        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT") == .zero)
    }
}
