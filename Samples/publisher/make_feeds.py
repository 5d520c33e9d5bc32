#!/usr/bin/env python3
"""Writes the sample publisher's feeds, one per format `issues subscribe` reads, over the files that
make_publisher.py generated. Feeds carry absolute URLs, so this runs once the server's address is known.

    python3 Samples/publisher/make_feeds.py --publisher DIR --base http://127.0.0.1:PORT [--extra-episode]

Under DIR (served at BASE):

    feeds/podcast.rss          RSS 2.0 with the iTunes podcast namespace: Loopback Podcast
    feeds/daily-loop.atom      Atom 1.0 with rel="enclosure" links: The Daily Loop
    feeds/field-notes.json     JSON Feed 1.1 with attachments: Field Notes
    feeds/quarterly.json       the issues catalog format (what `issues export` writes), with sha256
    api/HPImageArchive.json    a publisher's own JSON API (a daily picture), read through
                               Samples/mappings/daily-picture.json
    pictures/*_1920x1080.jpg   the pictures that API points to
    feeds/cover-stories.rss    RSS 2.0 whose items show each source of a cover: an `itunes:image` (a real
                               PNG), an EPUB declaring its cover, a PDF (page 1 is rendered), and an item
                               with no image at all (a placeholder); files under covers/

--extra-episode adds a newer podcast episode (#43) to the RSS feed: what a publisher does between
two syncs. Standard library only; the output depends only on the inputs.
"""

import argparse
import hashlib
import json
import os
import random
import struct
import sys
import zipfile
import zlib
from email.utils import format_datetime
from datetime import datetime, timezone
from xml.sax.saxutils import escape, quoteattr


def rfc822(date, hour=6):
    year, month, day = map(int, date.split("-"))
    return format_datetime(datetime(year, month, day, hour, 0, tzinfo=timezone.utc), usegmt=True)


def rfc3339(date, hour=6):
    return f"{date}T{hour:02d}:00:00Z"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def publication(catalog, title):
    return next(p for p in catalog["publications"] if p["title"] == title)


def podcast_rss(pub, base, extra):
    episodes = list(pub["issues"])
    if extra:
        episodes.append({"name": "Loopback Podcast #43", "date": "2026-11-27",
                         "assets": [{"path": "podcast/loopback-043.mp3", "size": 256 * 1024 + 10}]})
    items = []
    for episode in sorted(episodes, key=lambda e: e["date"], reverse=True):
        asset = episode["assets"][0]
        number = episode["name"].rsplit("#", 1)[1]
        items.append(f"""    <item>
      <title>{escape(episode["name"])}</title>
      <guid isPermaLink="false">loopback-podcast-{number}</guid>
      <pubDate>{rfc822(episode["date"])}</pubDate>
      <itunes:episode>{number}</itunes:episode>
      <itunes:duration>00:42:00</itunes:duration>
      <enclosure url={quoteattr(base + "/" + asset["path"])} length="{asset["size"]}" type="audio/mpeg"/>
    </item>""")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel>
    <title>Loopback Podcast</title>
    <link>{escape(base)}/podcast/</link>
    <description>Weekly talk from Loopback Press.</description>
    <itunes:author>Loopback Press</itunes:author>
{chr(10).join(items)}
  </channel>
</rss>
"""


def daily_atom(pub, base):
    entries = []
    for issue in sorted(pub["issues"], key=lambda i: i["date"], reverse=True):
        asset = issue["assets"][0]
        entries.append(f"""  <entry>
    <title>{escape(issue["name"])}</title>
    <id>tag:loopback.example,2026:daily-loop/{issue["date"]}</id>
    <published>{rfc3339(issue["date"])}</published>
    <updated>{rfc3339(issue["date"], 7)}</updated>
    <link rel="alternate" href={quoteattr(base + "/daily-loop/")}/>
    <link rel="enclosure" type="application/zip" length="{asset["size"]}" href={quoteattr(base + "/" + asset["path"])}/>
  </entry>""")
    return f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>The Daily Loop</title>
  <id>tag:loopback.example,2026:daily-loop</id>
  <updated>{rfc3339(max(i["date"] for i in pub["issues"]))}</updated>
  <link rel="self" href={quoteattr(base + "/feeds/daily-loop.atom")}/>
{chr(10).join(entries)}
</feed>
"""


def field_notes_json(pub, base):
    items = [{
        "id": f"field-notes-{issue['date'][:7]}",
        "title": issue["name"],
        "date_published": rfc3339(issue["date"]),
        "content_text": "This month's field notes.",
        "attachments": [{"url": base + "/" + a["path"], "mime_type": "application/pdf", "size_in_bytes": a["size"]}
                        for a in issue["assets"]],
    } for issue in pub["issues"]]
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "Field Notes",
                       "home_page_url": base + "/field-notes/", "feed_url": base + "/feeds/field-notes.json",
                       "items": items}, indent=2) + "\n"


def quarterly_catalog(pub, base):
    issues = [{"id": "quarterly-review-" + issue["date"], "name": issue["name"], "date": issue["date"],
               "assets": [{"url": base + "/" + a["path"], "sha256": a["sha256"], "unpack": a["unpack"]}
                          for a in issue["assets"]]} for issue in pub["issues"]]
    return json.dumps({"publication": "Quarterly Review", "issues": issues}, indent=2) + "\n"


PICTURES = [("20261120", "LoopbackBay_EN-US1120"), ("20261119", "HarbourLights_EN-US1119"),
            ("20261118", "MorningFog_EN-US1118")]


def picture_api(out):
    images = []
    for day, name in PICTURES:
        r = random.Random(day)
        data = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + r.randbytes(48 * 1024) + b"\xff\xd9"
        path = os.path.join(out, "pictures", f"{name}_1920x1080.jpg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        images.append({"startdate": day, "enddate": day, "urlbase": f"/pictures/{name}",
                       "copyright": f"{name.split('_')[0]} (© Loopback Press)",
                       "hsh": hashlib.md5(data).hexdigest()})
    return json.dumps({"images": images, "tooltips": {"loading": "Loading..."}}, indent=2) + "\n"


def png(width, height, colour, band=(255, 255, 255)):
    """A real RGB PNG: `colour` with a `band` across its top fifth and a darker square in the middle."""
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            if y < height // 5:
                pixel = band
            elif width // 3 <= x < 2 * width // 3 and 2 * height // 5 <= y < 3 * height // 5:
                pixel = tuple(c // 2 for c in colour)
            else:
                pixel = colour
            row += bytes(pixel)
        rows.append(bytes(row))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
            + chunk(b"IEND", b""))


def pdf(title):
    """A one-page PDF that renders: a coloured cover with a title in Helvetica, its cross-references computed."""
    text = title.replace("\\", "").replace("(", "").replace(")", "")
    content = (f"0.1 0.3 0.6 rg 0 0 612 792 re f 1 1 1 rg 40 560 532 160 re f "
               f"BT /F1 44 Tf 0.1 0.1 0.1 rg 60 620 Td ({text}) Tj ET\n").encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def epub(path, title, cover):
    """An EPUB 3 whose package declares `images/cover.png` (properties="cover-image")."""
    with zipfile.ZipFile(path, "w") as book:
        book.writestr(zipfile.ZipInfo("mimetype", (2026, 11, 1, 0, 0, 0)), "application/epub+zip")
        book.writestr(zipfile.ZipInfo("META-INF/container.xml", (2026, 11, 1, 0, 0, 0)),
                      '<?xml version="1.0"?><container version="1.0" '
                      'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                      '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                      '</rootfiles></container>')
        book.writestr(zipfile.ZipInfo("OEBPS/content.opf", (2026, 11, 1, 0, 0, 0)),
                      '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
                      f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{escape(title)}</dc:title>'
                      '</metadata><manifest><item id="t" href="text.xhtml" media-type="application/xhtml+xml"/>'
                      '<item id="c" href="images/cover.png" media-type="image/png" properties="cover-image"/>'
                      '</manifest><spine><itemref idref="t"/></spine></package>')
        book.writestr(zipfile.ZipInfo("OEBPS/text.xhtml", (2026, 11, 1, 0, 0, 0)),
                      f'<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>{escape(title)}</h1></body></html>')
        book.writestr(zipfile.ZipInfo("OEBPS/images/cover.png", (2026, 11, 1, 0, 0, 0)), cover)


def cover_stories(out, base):
    """The feed of cover sources, and its files under covers/."""
    folder = os.path.join(out, "covers")
    os.makedirs(folder, exist_ok=True)
    files = {
        "art-1.png": png(600, 800, (200, 60, 40)),
        "issue-1.pdf": pdf("Feed art"),
        "issue-3.pdf": pdf("Page one"),
        "issue-4.txt": b"An issue with no image anywhere: its cover is a placeholder.\n",
    }
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    epub(os.path.join(folder, "issue-2.epub"), "A Book", png(480, 720, (40, 120, 60)))
    items = [
        ("Cover Stories 1: feed art", "2026-11-04", "issue-1.pdf", "application/pdf", "art-1.png"),
        ("Cover Stories 2: an EPUB", "2026-11-03", "issue-2.epub", "application/epub+zip", None),
        ("Cover Stories 3: a PDF", "2026-11-02", "issue-3.pdf", "application/pdf", None),
        ("Cover Stories 4: nothing", "2026-11-01", "issue-4.txt", "text/plain", None),
    ]
    entries = []
    for n, (title, date, file, kind, image) in enumerate(items, 1):
        art = f'\n      <itunes:image href={quoteattr(base + "/covers/" + image)}/>' if image else ""
        size = os.path.getsize(os.path.join(folder, file))
        entries.append(f"""    <item>
      <title>{escape(title)}</title>
      <guid isPermaLink="false">cover-stories-{n}</guid>
      <link>{escape(base)}/covers/{n}</link>
      <description>Issue {n} of the cover sources.</description>
      <pubDate>{rfc822(date)}</pubDate>
      <enclosure url={quoteattr(base + "/covers/" + file)} length="{size}" type="{kind}"/>{art}
    </item>""")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel>
    <title>Cover Stories</title>
    <link>{escape(base)}/covers/</link>
    <description>Where an issue's cover comes from.</description>
{chr(10).join(entries)}
  </channel>
</rss>
"""


def main():
    parser = argparse.ArgumentParser(description="Write the sample publisher's feeds.")
    parser.add_argument("--publisher", required=True, help="the folder make_publisher.py wrote")
    parser.add_argument("--base", required=True, help="the URL the folder is served at, e.g. http://127.0.0.1:8080")
    parser.add_argument("--extra-episode", action="store_true", help="add a newer podcast episode (#43)")
    args = parser.parse_args()
    out, base = args.publisher, args.base.rstrip("/")
    with open(os.path.join(out, "catalog.json"), encoding="utf-8") as f:
        catalog = json.load(f)
    if args.extra_episode:
        episode = os.path.join(out, "podcast", "loopback-043.mp3")
        with open(episode, "wb") as f:
            f.write(b"ID3\x04\x00\x00\x00\x00\x00\x00" + random.Random(43).randbytes(256 * 1024))
    write(os.path.join(out, "feeds", "podcast.rss"), podcast_rss(publication(catalog, "Loopback Podcast"), base, args.extra_episode))
    write(os.path.join(out, "feeds", "daily-loop.atom"), daily_atom(publication(catalog, "The Daily Loop"), base))
    write(os.path.join(out, "feeds", "field-notes.json"), field_notes_json(publication(catalog, "Field Notes"), base))
    write(os.path.join(out, "feeds", "quarterly.json"), quarterly_catalog(publication(catalog, "Quarterly Review"), base))
    write(os.path.join(out, "api", "HPImageArchive.json"), picture_api(out))
    write(os.path.join(out, "feeds", "cover-stories.rss"), cover_stories(out, base))
    print(f"wrote 6 feeds for {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
