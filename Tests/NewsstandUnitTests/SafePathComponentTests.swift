import Testing

@testable import Newsstand
@testable import NewsstandCore
@testable import NewsstandArchive
@testable import NewsstandCatalog
@testable import NewsstandDownload
@testable import NewsstandFeeds
@testable import NewsstandSubscriptions

@Suite(.timeLimit(.minutes(5))) struct SafePathComponentTests {
    static let hostile: [String] = [
        "../../etc", "..", ".", "/", "//", "/etc/passwd", "a/b", "a\\b", "\0", "\u{1}x", "line\nbreak", "\u{7F}",
        ".hidden", "...", " . ", String(repeating: "é", count: 300), String(repeating: "x", count: 300), "",
        "   ", "\u{2028}", "library.json", "con", "東京/../..", "\u{202E}evil",
    ]

    @Test(arguments: hostile)
    func sanitisedNameIsOneSafeComponent(_ name: String) {
        let component = SafePathComponent(sanitizing: name)
        #expect(!component.value.isEmpty)
        #expect(!component.value.contains("/"))
        #expect(!component.value.contains("\0"))
        #expect(component.value != "." && component.value != "..")
        #expect(!component.value.hasPrefix("."))
        #expect(component.value.utf8.count <= SafePathComponent.maxUTF8Length)
        #expect(!component.value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        #expect(SafePathComponent(validating: component.value) != nil)
    }

    @Test func ordinaryNamesAreKept() {
        #expect(SafePathComponent(sanitizing: "The Daily 2026-11-20").value == "The Daily 2026-11-20")
        #expect(SafePathComponent(sanitizing: "Ünïcødé 東京").value == "Ünïcødé 東京")
    }

    @Test func validatingRefusesUnsafe() {
        for text in ["..", ".", "", "a/b", ".x", "a\nb", String(repeating: "a", count: 200)] {
            #expect(SafePathComponent(validating: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func suffixStaysWithinTheCap() {
        let long = SafePathComponent(sanitizing: String(repeating: "ж", count: 300))
        let suffixed = long.withSuffix(12)
        #expect(suffixed.value.hasSuffix(" (12)"))
        #expect(suffixed.value.utf8.count <= SafePathComponent.maxUTF8Length)
    }
}
