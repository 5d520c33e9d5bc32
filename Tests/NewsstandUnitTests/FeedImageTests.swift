import Foundation
import Testing

@testable import NewsstandCore
@testable import NewsstandFeeds

/// Items' images (their issues' covers), links and descriptions, from every format: RSS (`itunes:image`,
/// `media:thumbnail`, an image `media:content`, the channel's `image` or `itunes:image` as fallback), Atom
/// (an image enclosure; the feed's `logo`, else `icon`), JSON Feed (`image`, `banner_image`; the feed's `icon`)
/// and a mapping's `image` template.
@Suite(.timeLimit(.minutes(5))) struct FeedImageTests {
    func parse(_ text: String, mapping: FeedMapping? = nil) throws -> FeedDocument {
        guard case .feed(let document) = try FeedParser.parse(
            Data(text.utf8), url: FeedParserTests.url, mapping: mapping, limits: FeedLimits())
        else {
            throw NewsstandError(.invalidFeed, "not a feed")
        }
        return document
    }

    @Test func rssItemsTakeTheirOwnImageElseTheChannels() throws {
        let document = try parse(
            """
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
                 xmlns:media="http://search.yahoo.com/mrss/">
            <channel><title>Show</title>
              <image><url>/art/channel.png</url></image>
              <item><guid>a</guid><title>A</title><link>https://example.com/a</link>
                <description>&lt;p&gt;Hello &amp;amp; &lt;i&gt;welcome&lt;/i&gt;&lt;/p&gt;</description>
                <enclosure url="https://cdn.example.com/a.mp3" type="audio/mpeg" length="1"/>
                <media:thumbnail url="https://cdn.example.com/a-thumb.jpg"/>
                <itunes:image href="https://cdn.example.com/a.jpg"/></item>
              <item><guid>b</guid><title>B</title>
                <enclosure url="https://cdn.example.com/b.mp3" type="audio/mpeg" length="1"/>
                <media:group><media:thumbnail url="https://cdn.example.com/b-thumb.jpg"/></media:group></item>
              <item><guid>c</guid><title>C</title>
                <enclosure url="https://cdn.example.com/c.mp3" type="audio/mpeg" length="1"/>
                <media:content url="https://cdn.example.com/c.png" medium="image"/></item>
              <item><guid>d</guid><title>D</title>
                <enclosure url="https://cdn.example.com/d.mp3" type="audio/mpeg" length="1"/></item>
            </channel></rss>
            """)
        #expect(document.items.map { $0.image?.absoluteString } == [
            "https://cdn.example.com/a.jpg", "https://cdn.example.com/b-thumb.jpg", "https://cdn.example.com/c.png",
            "https://feeds.example.com/art/channel.png",
        ])
        #expect(document.items[0].link == "https://example.com/a")
        #expect(document.items[0].summary == "Hello & welcome")
        // The image is never an asset of the item (it is its cover, not its media).
        #expect(document.items.allSatisfy { $0.assets.count == 1 })
    }

    @Test func theChannelsItunesImageWinsOverItsRSSImage() throws {
        let document = try parse(
            """
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>S</title>
              <image><url>https://cdn.example.com/small.png</url></image>
              <itunes:image href="https://cdn.example.com/big.jpg"/>
              <item><guid>a</guid><title>A</title><enclosure url="https://cdn.example.com/a.mp3"/></item>
            </channel></rss>
            """)
        #expect(document.items.first?.image?.absoluteString == "https://cdn.example.com/big.jpg")
    }

    @Test func atomTakesAnImageEnclosureElseTheLogoElseTheIcon() throws {
        let document = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>F</title>
              <icon>/icon.png</icon><logo>https://cdn.example.com/logo.png</logo>
              <entry><id>1</id><title>One</title><summary>First &amp; best</summary>
                <link href="https://example.com/1"/>
                <link rel="enclosure" href="https://cdn.example.com/1.pdf" type="application/pdf"/>
                <link rel="enclosure" href="https://cdn.example.com/1.jpg" type="image/jpeg"/></entry>
              <entry><id>2</id><title>Two</title>
                <link rel="enclosure" href="https://cdn.example.com/2.pdf" type="application/pdf"/></entry>
            </feed>
            """)
        #expect(document.items.map { $0.image?.absoluteString } == [
            "https://cdn.example.com/1.jpg", "https://cdn.example.com/logo.png",
        ])
        #expect(document.items[0].link == "https://example.com/1")
        #expect(document.items[0].summary == "First & best")
        let iconOnly = try parse(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><icon>/icon.png</icon>
              <entry><id>1</id><title>One</title></entry></feed>
            """)
        #expect(iconOnly.items.first?.image?.absoluteString == "https://feeds.example.com/icon.png")
    }

    @Test func jsonFeedTakesImageThenBannerThenTheFeedsIcon() throws {
        let document = try parse(
            """
            {"version": "https://jsonfeed.org/version/1.1", "title": "J", "icon": "https://cdn.example.com/icon.png",
             "items": [
               {"id": "1", "title": "One", "url": "https://example.com/1", "summary": "S1",
                "image": "https://cdn.example.com/1.jpg", "banner_image": "https://cdn.example.com/1-banner.jpg"},
               {"id": "2", "title": "Two", "banner_image": "/2-banner.jpg"},
               {"id": "3", "title": "Three", "image": "javascript:alert(1)"}]}
            """)
        #expect(document.items.map { $0.image?.absoluteString } == [
            "https://cdn.example.com/1.jpg", "https://feeds.example.com/2-banner.jpg", "https://cdn.example.com/icon.png",
        ])
        #expect(document.items[0].link == "https://example.com/1" && document.items[0].summary == "S1")
    }

    @Test func aMappingsImageTemplate() throws {
        let mapping = try FeedMapping(
            json: Data(
                #"{"items": "images", "item": {"id": "{d}", "name": "Pic {d}", "image": "{u}_400.jpg", "assets": ["{u}.jpg"]}}"#
                    .utf8))
        let document = try parse(#"{"images": [{"d": "1", "u": "/p/1"}]}"#, mapping: mapping)
        #expect(document.items.first?.image?.absoluteString == "https://feeds.example.com/p/1_400.jpg")
    }
}
