import Foundation
import Testing

@testable import NewsstandCore

/// Names a library copied to FAT, exFAT, NTFS or an SMB share keeps: the one sanitiser replaces what those
/// refuse, drops trailing dots and spaces, and moves reserved device names aside.
@Suite(.timeLimit(.minutes(1))) struct PortableNameTests {
    static let refused: [Character] = [":", "?", "\"", "*", "|", "<", ">", "\\"]

    static func isPortable(_ name: String) -> Bool {
        !name.contains(where: refused.contains) && !name.hasSuffix(".") && !name.hasSuffix(" ")
            && !SafePathComponent.isReservedDeviceName(name)
            && !name.unicodeScalars.contains { $0.value < 0x20 }
    }

    @Test(arguments: [
        "a:b?c", "What? \"Quoted\" *stars* | pipes <angle> back\\slash", "trailing dots...", "trailing space ",
        "dots and spaces . . ", "CON", "con", "Con.txt", "nul.tar.gz", "COM1", "lpt9.mp3", "AUX ", "PRN.",
        "com¹", "\u{1}ctrl", "../../x", "/etc/passwd", "...",
    ])
    func sanitisedNamesArePortable(_ name: String) {
        let value = SafePathComponent(sanitizing: name).value
        #expect(Self.isPortable(value), "\(name.debugDescription) → \(value.debugDescription)")
        #expect(SafePathComponent(validating: value) != nil)
    }

    @Test func refusedCharactersBecomeUnderscores() {
        #expect(SafePathComponent(sanitizing: "a:b?c").value == "a_b_c")
        #expect(SafePathComponent(sanitizing: "Issue 3: \"Spring\"").value == "Issue 3_ _Spring_")
        #expect(SafePathComponent(sanitizing: "end...").value == "end")
    }

    @Test func deviceNamesGetAnUnderscoreAndOthersStay() {
        #expect(SafePathComponent(sanitizing: "CON").value == "_CON")
        #expect(SafePathComponent(sanitizing: "lpt1.mp3").value == "_lpt1.mp3")
        for kept in ["CONTENT", "console.log", "COM10", "LPT", "Auxiliary", "nullable"] {
            #expect(SafePathComponent(sanitizing: kept).value == kept)
        }
    }

    /// Superscript digits after COM/LPT are reserved too; the check used to count UTF-8 bytes (5 for `COM¹`).
    @Test func superscriptDigitDeviceNamesAreReserved() {
        for name in ["COM¹", "com²", "LPT³", "lpt¹.pdf"] {
            #expect(SafePathComponent.isReservedDeviceName(name), "\(name)")
        }
        #expect(SafePathComponent(sanitizing: "COM¹").value == "_COM¹")
        #expect(!SafePathComponent.isReservedDeviceName("COM¹²"))
    }

    /// A reserved name at the length cap: its `_` pushes the cut back onto a space or dot, which go again
    /// (found by the ContentDisposition fuzzer).
    @Test func deviceNameAtTheCapEndsWithoutSpaceOrDot() {
        let long = "NUL ..on" + String(repeating: " ", count: 110) + "." + String(repeating: "G", count: 40)
        let value = SafePathComponent(sanitizing: long).value
        #expect(value.hasPrefix("_NUL"))
        #expect(Self.isPortable(value), "\(value.debugDescription)")
        #expect(value.utf8.count <= SafePathComponent.maxUTF8Length)
    }

    /// Names made before these rules stay readable: validation did not tighten.
    @Test func oldFolderNamesStillValidate() {
        for old in ["The Daily: 2026", "What?", "CON", "name."] {
            #expect(SafePathComponent(validating: old) != nil, "\(old)")
        }
    }

    @Test func assetFileNamesArePortableToo() throws {
        let asset = AssetDownload(id: "0123456789abcdef", url: try #require(URL(string: "https://h.example/a%3Ab%3F.pdf")))
        let name = FileNaming.name(for: asset, contentDisposition: "attachment; filename=\"report: final?.pdf\"")
        #expect(name == "report_ final_.pdf")
    }
}
