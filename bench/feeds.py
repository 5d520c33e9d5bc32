"""Subscriptions: a large podcast feed (8 MB, 2,000 items with show notes and iTunes tags) parsed and
merged, and a `sync` of 200 subscriptions whose feeds did not change (nginx answers 304). SPEC.md
"Performance targets": parse + merge of the 8 MB feed <= 1 s and <= 64 MiB resident; the 304 sync
<= 5 s with no catalog file changed."""

import hashlib
import os
import random

from harness import BenchError, fmt_kib, log, met, rm, stats

ONLY = ("feeds",)
NEEDS_NGINX = True
TOOLS = ("curl",)
FULL = dict(feed_items=2000, feed_bytes=8_600_000, feed_subscriptions=200)
QUICK = dict(feed_items=500, feed_bytes=2_000_000, feed_subscriptions=40)

PARSE_TARGET_S = 1.0
PARSE_RSS_TARGET_KIB = 64 * 1024
SYNC_TARGET_S = 5.0

WORDS = ("the harbour season notes interview episode guest talk market history science weather city "
         "island music archive letters review morning evening radio story journey garden railway "
         "kitchen chess sailing photography").split()


def plan(ctx, only):
    if "feeds" not in only:
        return []
    return [("feeds_parse", "Subscriptions: an 8 MB feed", lambda: feed_parse(ctx)),
            ("feeds_sync304", "Subscriptions: sync of unchanged feeds", lambda: sync_unchanged(ctx))]


def show_notes(rng, size):
    words = []
    total = 0
    while total < size:
        word = rng.choice(WORDS)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


def podcast_feed(items, target_bytes, base, seed, extra_newest=0):
    """An RSS 2.0 podcast feed shaped like real ones: per item a title, guid, pubDate, iTunes tags, an
    enclosure on a CDN-style URL with a tracking query, and show notes in description and
    content:encoded (the bulk of a large feed)."""
    rng = random.Random(seed)
    per_item = max(200, target_bytes // max(1, items) - 700)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
           'xmlns:content="http://purl.org/rss/1.0/modules/content/">',
           f"<channel><title>Bench Podcast {seed}</title><link>{base}/</link>"
           "<description>A long-running show.</description><itunes:author>Bench</itunes:author>"]
    total = items + extra_newest
    for k in range(total, 0, -1):
        day = 1 + (k % 28)
        month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][k % 12]
        year = 2026 - (total - k) // 52
        notes = show_notes(rng, per_item // 2)
        out.append(
            f"<item><title>Episode {k}: {' '.join(rng.choice(WORDS) for _ in range(4))}</title>"
            f"<guid isPermaLink=\"false\">bench-{seed}-episode-{k}</guid>"
            f"<pubDate>Mon, {day:02d} {month} {year} 06:00:00 +0000</pubDate>"
            f"<itunes:episode>{k}</itunes:episode><itunes:duration>00:{k % 60:02d}:00</itunes:duration>"
            f"<itunes:explicit>false</itunes:explicit>"
            f"<enclosure url=\"{base}/media/bench-{seed}/episode-{k}.mp3?utm_source=rss&amp;aid={k * 7919}\" "
            f"length=\"{30_000_000 + k}\" type=\"audio/mpeg\"/>"
            f"<description><![CDATA[{notes}]]></description>"
            f"<content:encoded><![CDATA[<p>{notes}</p>]]></content:encoded></item>")
    out.append("</channel></rss>\n")
    return "\n".join(out).encode()


def catalog_digest(lib):
    """A digest of every catalog file (library.json and .catalog/): equal digests, nothing written."""
    h = hashlib.sha256()
    paths = [os.path.join(lib, "library.json")]
    for folder, _, files in os.walk(os.path.join(lib, ".catalog")):
        paths += [os.path.join(folder, f) for f in files]
    for path in sorted(paths):
        h.update(path.encode())
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def feed_parse(ctx):
    items, size = ctx.sizes["feed_items"], ctx.sizes["feed_bytes"]
    path = os.path.join(ctx.www, "big-feed.xml")
    body = podcast_feed(items, size, f"http://127.0.0.1:{ctx.nginx.port}", 1)
    with open(path, "wb") as f:
        f.write(body)
    url = ctx.nginx.url("big-feed.xml")
    log(f"feeds: {len(body):,}-byte feed of {items} items")
    t = {"curl": [], "seen": [], "all": [], "sync": []}
    rss = {"seen": [], "all": [], "sync": []}
    for i in range(ctx.runs):
        r = ctx.run(["curl", "-s", "-o", "/dev/null", url]).check("curl")
        t["curl"].append(r.seconds)
        # Subscribe remembering every item as seen: fetch, parse, merge, record 2,000 items.
        lib = ctx.fresh("feed-seen")
        r = ctx.run(ctx.issues_cmd("subscribe", url, "--initial", "0", "--no-download", "--library", lib)).check(
            "issues subscribe --initial 0")
        if "2000 older items" not in r.stdout and f"{items} older items" not in r.stdout:
            raise BenchError(f"subscribe did not remember {items} items: {r.stdout[:500]}")
        t["seen"].append(r.seconds)
        rss["seen"].append(r.maxrss_kib)
        # The publisher adds one episode: a sync reads the whole feed again and adds one issue.
        with open(path, "wb") as f:
            f.write(podcast_feed(items, size, f"http://127.0.0.1:{ctx.nginx.port}", 1, extra_newest=1))
        r = ctx.run(ctx.issues_cmd("sync", "--no-download", "--library", lib)).check("issues sync")
        if "1 new issue" not in r.stdout:
            raise BenchError(f"sync did not add the new episode: {r.stdout[:500]}")
        t["sync"].append(r.seconds)
        rss["sync"].append(r.maxrss_kib)
        with open(path, "wb") as f:
            f.write(body)
        rm(lib)
        # Subscribe adding every item as an issue: 2,000 catalog records in one change.
        lib = ctx.fresh("feed-all")
        r = ctx.run(ctx.issues_cmd("subscribe", url, "--initial", "all", "--no-download", "--library", lib)).check(
            "issues subscribe --initial all")
        t["all"].append(r.seconds)
        rss["all"].append(r.maxrss_kib)
        rm(lib)
        log(f"feeds run {i + 1}/{ctx.runs}: subscribe (seen) {t['seen'][-1]:.3f} s, sync +1 {t['sync'][-1]:.3f} s, "
            f"subscribe (all) {t['all'][-1]:.3f} s, curl {t['curl'][-1]:.3f} s")
    rm(path)
    return dict(items=items, bytes=len(body), **{k: stats(v) for k, v in t.items()},
                **{k + "_rss_kib": stats(v) for k, v in rss.items()})


def sync_unchanged(ctx):
    count = ctx.sizes["feed_subscriptions"]
    base = f"http://127.0.0.1:{ctx.nginx.port}"
    lib = ctx.fresh("feeds-304")
    log(f"feeds: {count} subscriptions (setup, untimed)")
    for n in range(count):
        name = f"feed-{n:03d}.xml"
        with open(os.path.join(ctx.www, name), "wb") as f:
            f.write(podcast_feed(20, 40_000, base, 1000 + n))
        ctx.run(ctx.issues_cmd("subscribe", ctx.nginx.url(name), "--no-download", "--library", lib)).check(
            "issues subscribe")
    before = catalog_digest(lib)
    times, rss = [], []
    for i in range(ctx.runs):
        r = ctx.run(ctx.issues_cmd("sync", "--no-download", "--library", lib)).check("issues sync")
        unchanged = r.stdout.count(": unchanged")
        if unchanged != count:
            raise BenchError(f"sync: {unchanged} of {count} subscriptions unchanged: {r.stdout[:500]} {r.stderr[:500]}")
        if catalog_digest(lib) != before:
            raise BenchError("sync of unchanged feeds changed a catalog file")
        times.append(r.seconds)
        rss.append(r.maxrss_kib)
        log(f"feeds run {i + 1}/{ctx.runs}: sync of {count} unchanged subscriptions {times[-1]:.3f} s")
    rm(lib)
    for n in range(count):
        rm(os.path.join(ctx.www, f"feed-{n:03d}.xml"))
    return dict(count=count, sync=stats(times), sync_rss_kib=stats(rss))


def spread(st):
    return f"{st['median']:.3f} s ({st['min']:.3f}–{st['max']:.3f})"


def render(results, report):
    if "feeds_parse" in results:
        r = results["feeds_parse"]
        scope = f"{r['bytes'] / 1e6:.1f} MB, {r['items']:,} items"
        report.row(f"`issues sync` of a feed that gained 1 item ({scope}): fetch, parse, merge, add",
                   spread(r["sync"]), reference=f"curl (fetch only) {r['curl']['median']:.3f} s",
                   target=f"≤ {PARSE_TARGET_S:.0f} s", ok=met(r["sync"]["median"] <= PARSE_TARGET_S))
        report.row(f"peak RSS of that `issues sync`", f"{fmt_kib(r['sync_rss_kib']['max'])} (max)",
                   target="≤ 64 MiB", ok=met(r["sync_rss_kib"]["max"] <= PARSE_RSS_TARGET_KIB))
        report.row(f"`issues subscribe --initial 0` ({scope}; every item remembered as seen)", spread(r["seen"]),
                   target="— (info)")
        report.row(f"`issues subscribe --initial all` ({scope}; {r['items']:,} issues added)", spread(r["all"]),
                   target="— (info)")
        report.details.append(
            f"| feeds: RSS of subscribe --initial 0 / sync / --initial all | | | | "
            f"{fmt_kib(r['seen_rss_kib']['max'])} / {fmt_kib(r['sync_rss_kib']['max'])} / "
            f"{fmt_kib(r['all_rss_kib']['max'])} (max) |")
    if "feeds_sync304" in results:
        r = results["feeds_sync304"]
        report.row(f"`issues sync` of {r['count']} unchanged subscriptions (304), no catalog write",
                   spread(r["sync"]), target=f"≤ {SYNC_TARGET_S:.0f} s", ok=met(r["sync"]["median"] <= SYNC_TARGET_S))
        report.detail(f"feeds: sync of {r['count']} unchanged", r["sync"],
                      f"RSS max {fmt_kib(r['sync_rss_kib']['max'])}")


NOTES = [
    "- **Subscriptions**: a generated RSS 2.0 podcast feed of 2,000 items (about 8 MB: per item a title, guid, "
    "pubDate, iTunes tags, an enclosure URL with a tracking query, show notes in description and "
    "content:encoded) served by nginx. Per run: `curl` fetches it (reference); `issues subscribe URL "
    "--initial 0 --no-download` into a fresh library (every item remembered as seen); the feed gains one "
    "episode and `issues sync --no-download` re-reads and merges all of it and adds one issue (the target "
    "row); `issues subscribe --initial all` adds all 2,000 as issues. The 304 row: 200 subscriptions to "
    "small feeds (setup untimed), then `issues sync --no-download` `--runs` times; nginx answers every "
    "conditional request with 304, and the bench checks every subscription printed `unchanged` and that no "
    "file of `library.json` and `.catalog/` changed (a SHA-256 over all of them).",
]
