internal import CVips
import Foundation
import NewsstandCore

/// A cover made when no source gives one: the publication, the title and the date, white on a colour
/// derived from the publication's name (so one publication's issues look alike on a shelf). Drawn by libvips
/// (`vips_text`, through Pango and fontconfig); where no font is installed the colour alone is drawn.
enum Placeholder {
    static let width = 1024
    /// 3:4, a magazine's proportions.
    static let height = 1365

    /// The placeholder's image.
    static func image(title: String, date: String, publication: String) throws(CoverRefusal) -> VipsImage {
        guard Vips.started else { throw CoverRefusal("libvips cannot start") }
        let (red, green, blue) = colour(of: publication)
        let base = try VipsImage.make("cannot draw the placeholder") {
            cvips_solid(Int32(width), Int32(height), red, green, blue, $0)
        }
        let markup = """
            <span font_desc="sans 34">\(escape(clip(publication, 80)))</span>

            <span font_desc="sans bold 68">\(escape(clip(title, 160)))</span>

            <span font_desc="sans 44">\(escape(date))</span>
            """
        // Without a usable font the colour alone is the placeholder (libvips's message is dropped on purpose).
        guard let mask = try? VipsImage.make("no font", { cvips_text(markup, "sans 40", Int32(width - 144), 72, $0) }) else {
            cvips_error_clear()
            return base
        }
        let x = max(0, (width - mask.width) / 2)
        let y = max(72, (height - mask.height) / 3)
        guard
            let placed = try? VipsImage.make("cannot place the text", {
                cvips_embed(mask.pointer, Int32(x), Int32(y), Int32(width), Int32(height), $0)
            }),
            let ink = try? VipsImage.make("cannot draw", { cvips_solid(Int32(width), Int32(height), 255, 255, 255, $0) }),
            let drawn = try? VipsImage.make("cannot draw the text", { cvips_blend(placed.pointer, ink.pointer, base.pointer, $0) })
        else {
            cvips_error_clear()
            return base
        }
        return drawn
    }

    /// A colour for `publication`: its FNV-1a hash picks a hue; saturation and value are fixed so that white
    /// text always reads.
    static func colour(of publication: String) -> (Double, Double, Double) {
        var hash: UInt32 = 2_166_136_261
        for byte in publication.utf8 {
            hash = (hash ^ UInt32(byte)) &* 16_777_619
        }
        let hue = Double(hash % 360) / 60
        let (s, v) = (0.55, 0.52)
        let c = v * s
        let x = c * (1 - abs(hue.truncatingRemainder(dividingBy: 2) - 1))
        let m = v - c
        let (r, g, b): (Double, Double, Double)
        switch Int(hue) {
        case 0: (r, g, b) = (c, x, 0)
        case 1: (r, g, b) = (x, c, 0)
        case 2: (r, g, b) = (0, c, x)
        case 3: (r, g, b) = (0, x, c)
        case 4: (r, g, b) = (x, 0, c)
        default: (r, g, b) = (c, 0, x)
        }
        return ((r + m) * 255, (g + m) * 255, (b + m) * 255)
    }

    /// Pango markup's special characters escaped: a title from a feed is text, never markup.
    static func escape(_ text: String) -> String { MarkupText.escaped(text) }

    /// At most `limit` characters, with an ellipsis when cut.
    static func clip(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
