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

--extra-episode adds a newer podcast episode (#43) to the RSS feed: what a publisher does between
two syncs. Standard library only; the output depends only on the inputs.
"""

import argparse
import hashlib
import json
import os
import random
import sys
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
    print(f"wrote 5 feeds for {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
