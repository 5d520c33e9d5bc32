import Foundation
import NewsstandTestSupport
import Testing

@testable import NewsstandCore

/// The hand-written writer's strings: what it writes reads back as the same string, through the catalog's own
/// reader and through Foundation's, with exactly the escapes JSON requires.
@Suite(.timeLimit(.minutes(1))) struct JSONWriterTests {
    @Test func stringsRoundTripThroughBothReaders() throws {
        var random = SeededGenerator(state: 0x15_0_A_7)
        let alphabet: [String] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "e\u{301}",
            "€", "😀", "/", "\u{2028}"]
        var samples = ["", "plain", "\"", "\\", "ends with \\", "\"quoted\"", String(repeating: "x", count: 5_000)]
        for _ in 0..<500 {
            let length = Int.random(in: 0...40, using: &random)
            samples.append((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }.joined())
        }
        for sample in samples {
            var writer = JSONWriter(capacity: 16)
            writer.string(sample)
            let written = writer.bytes
            let ours = try written.withUnsafeBufferPointer { try JSONReader.parse($0) }
            #expect(ours == .string(sample))
            let foundation = try JSONSerialization.jsonObject(with: Data(written), options: [.fragmentsAllowed])
            #expect(foundation as? String == sample)
            // Only what JSON requires is escaped: quotes, backslashes and control characters.
            let unescaped = sample.utf8.filter { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            #expect(written.count >= unescaped.count + 2)
        }
    }

    @Test func controlCharactersUseTheShortEscapesOrHex() {
        var writer = JSONWriter(capacity: 16)
        writer.string("a\"b\\c\nd\re\tf\u{0}g\u{1F}")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""a\"b\\c\nd\re\tf\u0000g\u001f""#)
    }
}
