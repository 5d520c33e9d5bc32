import Foundation

@testable import NewsstandCovers

/// Files the cover tests write for themselves: a minimal PDF by hand, a PNG decompression bomb by hand, an EPUB's
/// folder, images through libvips.
enum CoverFixtures {
    /// A one-page PDF (a red square on a US-letter page), its cross-reference table computed.
    static func pdf() -> Data {
        let content = "1 0 0 rg 100 300 400 400 re f\n0 0 1 rg 150 350 100 100 re f\n"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
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
        return Data(text.utf8)
    }

    /// A 30,000 × 30,000 one-bit grey PNG of zeros: 900 megapixels in well under a megabyte (its IDAT is a
    /// deflate stream of back-references, each 258 zero bytes in 13 bits).
    static func pngBomb(side: Int = 30_000) -> Data {
        let rowBytes = 1 + (side + 7) / 8  // the filter byte, then the bits
        let total = rowBytes * side
        var bits = BitWriter()
        bits.write(1, count: 1)  // the final block
        bits.write(1, count: 2)  // fixed Huffman codes
        // One literal zero (code 0x30, 8 bits, reversed), then copies of 258 at distance 1 (code 285 = 11000101).
        bits.writeReversed(0x30, count: 8)
        var left = total - 1
        while left >= 258 {
            bits.writeReversed(0b1100_0101, count: 8)
            bits.write(0, count: 5)  // distance code 0: distance 1
            left -= 258
        }
        while left > 0 {
            bits.writeReversed(0x30, count: 8)
            left -= 1
        }
        bits.writeReversed(0, count: 7)  // end of block (256: seven zero bits)
        var zlib = Data([0x78, 0x01])
        zlib.append(contentsOf: bits.all)
        // Adler-32 of zeros: a stays 1, b counts the bytes.
        let b = UInt32(total % 65521)
        zlib.append(contentsOf: withUnsafeBytes(of: ((b << 16) | 1).bigEndian, Array.init))
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        header.append(contentsOf: withUnsafeBytes(of: UInt32(side).bigEndian, Array.init))
        header.append(contentsOf: withUnsafeBytes(of: UInt32(side).bigEndian, Array.init))
        header.append(contentsOf: [1, 0, 0, 0, 0])  // bit depth 1, grey, deflate, no filter method, no interlace
        png.append(chunk("IHDR", header))
        png.append(chunk("IDAT", zlib))
        png.append(chunk("IEND", Data()))
        return png
    }

    private static func chunk(_ type: String, _ body: Data) -> Data {
        var data = Data(withUnsafeBytes(of: UInt32(body.count).bigEndian, Array.init))
        let typed = Data(type.utf8) + body
        data.append(typed)
        data.append(contentsOf: withUnsafeBytes(of: crc32(typed).bigEndian, Array.init))
        return data
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// Deflate's bit order: fields least significant bit first, Huffman codes most significant first.
    struct BitWriter {
        var bytes: [UInt8] = []
        var current: UInt8 = 0
        var used = 0

        mutating func write(_ value: UInt32, count: Int) {
            for i in 0..<count { bit(UInt8((value >> i) & 1)) }
        }

        mutating func writeReversed(_ code: UInt32, count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bit(UInt8((code >> i) & 1)) }
        }

        private mutating func bit(_ b: UInt8) {
            current |= b << used
            used += 1
            if used == 8 {
                bytes.append(current)
                current = 0
                used = 0
            }
        }

        /// The bytes with the last partial one.
        var all: [UInt8] { used > 0 ? bytes + [current] : bytes }
    }

    /// An EPUB 3's files: container, package (declaring `images/cover.png` as the cover image), the image, a page.
    static func epubEntries(cover: Data) -> [(String, Data)] {
        [
            ("mimetype", Data("application/epub+zip".utf8)),
            (
                "META-INF/container.xml",
                Data(
                    """
                    <?xml version="1.0"?>
                    <container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
                      <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
                    </container>
                    """.utf8)
            ),
            (
                "OEBPS/content.opf",
                Data(
                    """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
                      <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Book</dc:title></metadata>
                      <manifest>
                        <item id="p1" href="text/page1.xhtml" media-type="application/xhtml+xml"/>
                        <item id="c" href="images/cover.png" media-type="image/png" properties="cover-image"/>
                        <item id="a" href="images/aaa.jpg" media-type="image/jpeg"/>
                      </manifest>
                      <spine><itemref idref="p1"/></spine>
                    </package>
                    """.utf8)
            ),
            ("OEBPS/images/cover.png", cover),
            ("OEBPS/text/page1.xhtml", Data("<html xmlns=\"http://www.w3.org/1999/xhtml\"><body>1</body></html>".utf8)),
        ]
    }
}
