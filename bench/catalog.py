"""The catalog at scale: realistic libraries of 1,000 / 10,000 / 100,000 / 1,000,000 issues, each with
two assets whose URLs are about 100 characters and carry sha256 values, built with `issues import`
from a generated JSON Lines file. Measures `import`, `list`, `list --json`, `show` and `add`, the peak
resident memory of each, the catalog's size on disk (SPEC.md "The catalog at scale"), and up to 100,000
issues the upkeep that reads every issue: `prune --dry-run --keep 2` and `verify` (issue 32)."""

import datetime
import http.server
import json
import os
import random
import subprocess
import threading

from harness import BenchError, fmt_bytes, fmt_kib, log, met, rm, stats

ONLY = ("catalog", "catalog-1m")
NEEDS_NGINX = False
TOOLS = ()
# `catalog` runs catalog_sizes; `catalog-1m` runs catalog_1m (in a full run, not in --quick).
FULL = dict(catalog_sizes=[1_000, 10_000, 100_000], catalog_1m=[1_000_000])
QUICK = dict(catalog_sizes=[1_000, 10_000], catalog_1m=[1_000_000])

# SPEC.md "Performance targets", stated for 100,000 issues. A smaller library must meet them too (the
# cost of show and add must not grow with the library, and list only shrinks); at 1,000,000 issues only
# show and add have targets, the other rows are informational.
TARGETS = dict(import_s=10.0, list_s=0.3, list_rss_kib=64 * 1024, list_json_s=1.0, show_s=0.05, add_s=0.05,
               prune_s=3.0, verify_s=3.0, sync_s=1.0)
# Issue 32: `list` of 100,000 issues in 0.2 s; at 1,000,000 issues `import` streams (≤ 90 s, peak ≤ 128 MiB)
# and `list` takes ≤ 1 s and ≤ 128 MiB (SPEC.md "Performance targets").
TARGETS_100K = dict(list_s=0.2)
TARGETS_1M = dict(import_s=90.0, import_rss_kib=128 * 1024, list_s=1.0, list_rss_kib=128 * 1024, show_s=0.05,
                  add_s=0.05)
UPKEEP_UP_TO = 100_000  # prune --dry-run and verify read every issue: timed up to this size
SYNC_AT = 100_000  # the feed row: a 5,000-item feed's sync into the library of this size
SYNC_ITEMS = 5_000
IMPORT_RUNS_CAP_AT = 1_000_000  # from this size on, import once (each import writes a million files)


def plan(ctx, only):
    items = []
    if "catalog" in only:
        items += [(f"catalog_{n}", f"Catalog ({n:,} issues)", lambda n=n: catalog(ctx, n))
                  for n in ctx.sizes["catalog_sizes"]]
    if "catalog-1m" in only:
        items += [(f"catalog_{n}", f"Catalog ({n:,} issues)", lambda n=n: catalog(ctx, n))
                  for n in ctx.sizes["catalog_1m"]]
    return items


# --------------------------------------------------------------------------------------------------
# A realistic import file: a few hundred to two thousand periodicals, years of back issues

PLACES = ["Harbour", "Northern", "Valley", "Coastal", "Highland", "Metropolitan", "Riverside", "Prairie",
          "Atlantic", "Pacific", "Midland", "Southern", "Eastern", "Western", "Lakeside", "Mountain",
          "Capital", "County", "Island", "Border", "Union", "Republic", "Frontier", "Garden",
          "Brighton", "Bristol", "Dublin", "Lyon", "Porto", "Leipzig", "Toronto", "Melbourne", "Boston",
          "Chicago", "Seattle", "Denver", "Austin", "Oakland", "Glasgow", "Cardiff", "Bergen", "Ghent",
          "Basel", "Graz", "Turin", "Seville", "Krakow", "Tartu", "Aarhus", "Utrecht"]
TITLES = ["Gazette", "Review", "Quarterly", "Chronicle", "Herald", "Weekly", "Journal", "Monthly",
          "Observer", "Courier", "Times", "Post", "Digest", "Almanac", "Bulletin", "Dispatch", "Tribune",
          "Mercury", "Sentinel", "Standard", "Examiner", "Record", "Ledger", "Register", "Magazine",
          "Gardener", "Cyclist", "Angler", "Architect", "Traveller", "Kitchen", "Science Monthly",
          "Photography", "Sailing", "Railway Modeller", "Woodworker", "Business Review", "Film Weekly",
          "Literary Supplement", "Chess Quarterly", "Birdwatcher", "Motor Sport", "Jazz Review",
          "Gamer", "Radio Times"]
CDNS = ["cdn.pressdist.example.net", "media.perihub.example.com", "dl.newsstand.example.org",
        "assets.editions.example.io"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
LAST_DAY = datetime.date(2026, 11, 20)


def slug(text):
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def publications(count, rng):
    """`count` distinct periodicals: (title, slug, frequency, offset in days, CDN host)."""
    combos = [f"{'The ' if i % 3 == 0 else ''}{p} {t}" for i, (p, t) in
              enumerate((p, t) for t in TITLES for p in PLACES)]
    rng.shuffle(combos)
    if count > len(combos):
        raise BenchError(f"catalog: only {len(combos)} periodical names for {count} publications")
    frequencies = ["daily"] * 3 + ["weekly"] * 5 + ["monthly"] * 2
    return [(title, slug(title), rng.choice(frequencies), rng.randrange(0, 7), rng.choice(CDNS))
            for title in combos[:count]]


def issue_record(pub, k, rng):
    """The k-th most recent issue of `pub`, as an import record with two assets (a PDF, a ZIP)."""
    title, s, frequency, offset, cdn = pub
    if frequency == "monthly":
        months = (LAST_DAY.year * 12 + LAST_DAY.month - 1) - k - offset
        date = datetime.date(months // 12, months % 12 + 1, 1)
        name = f"{title} {MONTHS[date.month - 1]} {date.year}"
    elif frequency == "weekly":
        date = LAST_DAY - datetime.timedelta(days=7 * k + offset)
        name = f"{title} No. {5000 - k}"
    else:
        date = LAST_DAY - datetime.timedelta(days=k + offset)
        name = f"{title} {date.isoformat()}"
    token = f"{rng.getrandbits(48):012x}"
    base = f"https://{cdn}/{s}/{date.year}/{date.month:02d}/{token}/{s}-{date.isoformat()}"
    assets = [{"url": base + ".pdf", "sha256": f"{rng.getrandbits(256):064x}"},
              {"url": base + ".zip", "sha256": f"{rng.getrandbits(256):064x}", "unpack": True}]
    return {"name": name, "date": date.isoformat(), "assets": assets}


def write_import_file(path, count):
    """Writes `count` issues as JSON Lines; returns (names, average URL length, bytes)."""
    rng = random.Random(20261123 + count)
    pubs = publications(min(2000, max(20, count // 500)), rng)
    names, url_chars = [], 0
    with open(path, "w") as f:
        for i in range(count):
            record = issue_record(pubs[i % len(pubs)], i // len(pubs), rng)
            names.append(record["name"])
            url_chars += sum(len(a["url"]) for a in record["assets"])
            f.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    if len(set(names)) != count:
        raise BenchError("catalog: generated issue names are not unique")
    return names, url_chars / (2 * count), os.path.getsize(path)


# --------------------------------------------------------------------------------------------------
# Measurement


def du(path, *options):
    p = subprocess.run(["du", "-s", *options, path], capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError(f"du -s {' '.join(options)} {path}: {p.stderr.strip()}")
    return int(p.stdout.split()[0])


def catalog(ctx, count):
    source = os.path.join(ctx.work, f"catalog-{count}.jsonl")
    log(f"catalog {count:,}: writing {source}")
    names, url_avg, source_bytes = write_import_file(source, count)
    rng = random.Random(count)

    # import: each run into a fresh library; the last one is kept for the other commands.
    import_runs = 1 if count >= IMPORT_RUNS_CAP_AT else ctx.runs
    times = {k: [] for k in ("import", "list", "list_json", "show", "add", "prune", "verify", "sync")}
    rss = {k: [] for k in times}
    lib = None
    for i in range(import_runs):
        if lib:
            rm(lib)
        lib = ctx.fresh(f"catalog-{count}")
        r = ctx.run(ctx.issues_cmd("import", "--quiet", source, "--library", lib)).check("issues import")
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        if last != f"{count} added, 0 refused":
            raise BenchError(f"issues import of {count} issues printed {last!r}\nstderr: {r.stderr.strip()[:1500]}")
        times["import"].append(r.seconds)
        rss["import"].append(r.maxrss_kib)
        log(f"catalog {count:,} import {i + 1}/{import_runs}: {r.seconds:.2f} s, {fmt_kib(r.maxrss_kib)}")

    cat = os.path.join(lib, ".catalog")
    disk = dict(catalog_bytes=du(cat, "-b"), catalog_allocated=du(cat, "-B1"), catalog_files=du(cat, "--inodes"),
                library_bytes=du(lib, "-b"), library_files=du(lib, "--inodes"), source_bytes=source_bytes,
                url_avg_chars=round(url_avg, 1))
    log(f"catalog {count:,}: .catalog {fmt_bytes(disk['catalog_bytes'])} "
        f"({fmt_bytes(disk['catalog_allocated'])} allocated, {disk['catalog_files']:,} inodes)")

    # Untimed checks that list and list --json print every issue.
    listing = os.path.join(ctx.work, f"list-{count}.txt")
    ctx.run(ctx.issues_cmd("list", "--library", lib), stdout_path=listing).check("issues list")
    with open(listing, "rb") as f:
        lines = sum(1 for _ in f)
    if lines < count:
        raise BenchError(f"issues list printed {lines} lines for {count} issues")
    ctx.run(ctx.issues_cmd("list", "--json", "--library", lib), stdout_path=listing).check("issues list --json")
    listed = count_json_issues(listing, count)
    if listed != count:
        raise BenchError(f"issues list --json printed {listed} issues, expected {count}")
    rm(listing)

    for i in range(ctx.runs):
        r = ctx.run(ctx.issues_cmd("list", "--library", lib), stdout_to_null=True).check("issues list")
        times["list"].append(r.seconds)
        rss["list"].append(r.maxrss_kib)
        r = ctx.run(ctx.issues_cmd("list", "--json", "--library", lib), stdout_to_null=True).check(
            "issues list --json")
        times["list_json"].append(r.seconds)
        rss["list_json"].append(r.maxrss_kib)
        name = rng.choice(names)
        r = ctx.run(ctx.issues_cmd("show", name, "--library", lib)).check("issues show")
        if name not in r.stdout:
            raise BenchError(f"issues show {name!r} did not print the issue's name:\n{r.stdout[:500]}")
        times["show"].append(r.seconds)
        rss["show"].append(r.maxrss_kib)
        new = f"Late Edition Extra No. {i + 1}"
        url = (f"https://cdn.pressdist.example.net/late-edition/2026/11/{rng.getrandbits(48):012x}/"
               f"late-edition-extra-{i + 1:03d}.pdf")
        r = ctx.run(ctx.issues_cmd("add", new, "--date", f"2026-11-{21 + i % 9:02d}", "--asset", url,
                                   "--library", lib)).check("issues add")
        times["add"].append(r.seconds)
        rss["add"].append(r.maxrss_kib)
        if count <= UPKEEP_UP_TO:
            # Both read every issue; a dry run changes nothing, and verify without --repair changes nothing.
            r = ctx.run(ctx.issues_cmd("prune", "--dry-run", "--keep", "2", "--library", lib),
                        stdout_to_null=True).check("issues prune --dry-run --keep 2")
            times["prune"].append(r.seconds)
            rss["prune"].append(r.maxrss_kib)
            r = ctx.run(ctx.issues_cmd("verify", "--library", lib), stdout_to_null=True).check("issues verify")
            times["verify"].append(r.seconds)
            rss["verify"].append(r.maxrss_kib)
        log(f"catalog {count:,} run {i + 1}/{ctx.runs}: list {times['list'][-1]:.3f} s "
            f"({fmt_kib(rss['list'][-1])}), list --json {times['list_json'][-1]:.3f} s, "
            f"show {times['show'][-1]:.3f} s, add {times['add'][-1]:.3f} s")
    ctx.run(ctx.issues_cmd("show", new, "--library", lib)).check("issues show (an added issue)")
    if count == SYNC_AT:
        sync_times, sync_rss = sync_feed(ctx, lib)
        times["sync"], rss["sync"] = sync_times, sync_rss
    rm(lib)
    rm(source)
    result = dict(count=count, import_runs=import_runs, **disk)
    for k in times:
        if times[k]:
            result[k] = stats(times[k])
            result[k + "_rss_kib"] = stats(rss[k])
    return result


def rss_feed(count):
    """A podcast feed of `count` items, newest first, each with a guid, a date and an MP3 enclosure."""
    first = datetime.datetime(2026, 11, 20, 6, 0, 0)
    items = []
    for i in range(count):
        n = SYNC_ITEMS - i
        d = first - datetime.timedelta(hours=6 * i)
        items.append(f"<item><title>Harbour Radio Hour {n}</title><guid isPermaLink=\"false\">harbour-radio-{n}</guid>"
                     f"<pubDate>{d.strftime('%a, %d %b %Y %H:%M:%S +0000')}</pubDate>"
                     f"<enclosure url=\"https://cdn.pressdist.example.net/harbour-radio/{d.year}/{d.month:02d}/"
                     f"ep{n:05d}-a1b2c3d4e5f6.mp3\" length=\"12345678\" type=\"audio/mpeg\"/>"
                     f"<description>Episode {n} of the Harbour Radio Hour.</description></item>")
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><rss version=\"2.0\"><channel><title>Harbour Radio Hour"
            "</title><link>https://example.net/</link><description>A weekly hour.</description>"
            + "".join(items) + "</channel></rss>").encode()


def sync_feed(ctx, lib):
    """`issues sync --no-download` of a feed that grew from 1 to SYNC_ITEMS items, into a copy of `lib` each run
    (the subscription made once, with the first item): the new items are checked against the library and added.
    The feed is served from memory with no validators, so every sync fetches and parses it."""
    feed = {"body": rss_feed(1)}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = feed["body"]
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    times, rss = [], []
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/radio.xml"
        ctx.run(ctx.issues_cmd("subscribe", url, "--name", "radio", "--initial", "1", "--no-download",
                               "--library", lib)).check("issues subscribe")
        feed["body"] = rss_feed(SYNC_ITEMS)
        for i in range(ctx.runs):
            copy = ctx.fresh("catalog-sync")
            subprocess.run(["cp", "-a", lib, copy], check=True)
            r = ctx.run(ctx.issues_cmd("sync", "--no-download", "--library", copy)).check("issues sync")
            added = sum(1 for line in r.stdout.splitlines() if line.strip().startswith("added "))
            if added != SYNC_ITEMS - 1:
                raise BenchError(f"issues sync added {added} issues, expected {SYNC_ITEMS - 1}:\n{r.stdout[-500:]}")
            times.append(r.seconds)
            rss.append(r.maxrss_kib)
            log(f"catalog sync of {SYNC_ITEMS:,} items into {lib}: {r.seconds:.2f} s, {fmt_kib(r.maxrss_kib)}")
            rm(copy)
    finally:
        server.shutdown()
        server.server_close()
    return times, rss


def count_json_issues(path, expected):
    """Issues in a `list --json` output: a JSON array (or one object per line). Parsed for up to 100,000
    issues; above that the objects are counted by their top-level "name" key without building them all."""
    if expected <= 100_000:
        with open(path) as f:
            text = f.read()
        try:
            value = json.loads(text)
            return len(value) if isinstance(value, list) else -1
        except ValueError:
            try:
                return sum(1 for line in text.splitlines() if line.strip() and json.loads(line))
            except ValueError as e:
                raise BenchError(f"issues list --json: neither a JSON array nor JSON Lines ({e})")
    decoder, n = json.JSONDecoder(), 0
    with open(path) as f:
        text = f.read()
    i, end = 0, len(text)
    while i < end and text[i] in " \t\r\n[":
        i += 1
    while i < end:
        obj, i = decoder.raw_decode(text, i)
        n += isinstance(obj, dict) and "name" in obj
        while i < end and text[i] in " \t\r\n,]":
            i += 1
    return n


# --------------------------------------------------------------------------------------------------
# Report


def spread(st):
    """'124 ms (118–131)' or '3.21 s (3.05–3.40)': the median, then min–max in the median's unit."""
    if st["median"] < 1:
        return f"{st['median'] * 1000:.0f} ms ({st['min'] * 1000:.0f}–{st['max'] * 1000:.0f})"
    return f"{st['median']:.2f} s ({st['min']:.2f}–{st['max']:.2f})"


TARGET_TEXT = dict(import_s="≤ 10 s", list_s="≤ 0.3 s", list_rss_kib="≤ 64 MiB", list_json_s="≤ 1 s",
                   show_s="≤ 50 ms", add_s="≤ 50 ms", prune_s="≤ 3 s", verify_s="≤ 3 s", sync_s="≤ 1 s")


def target_of(n, name):
    """(value, text) of the target of row `name` for a library of `n` issues, or None (informational)."""
    if n >= 1_000_000:
        value = TARGETS_1M.get(name)
        if value is None:
            return None
        return value, (f"≤ {value / 1024:.0f} MiB" if name.endswith("_kib") else
                       f"≤ {value * 1000:.0f} ms" if value < 1 else f"≤ {value:g} s")
    if n > 100_000:
        return (TARGETS[name], TARGET_TEXT[name]) if name in ("show_s", "add_s") else None
    if n == 100_000 and name in TARGETS_100K:
        return TARGETS_100K[name], f"≤ {TARGETS_100K[name]:g} s"
    return TARGETS[name], TARGET_TEXT[name]


def render(results, report):
    keys = sorted((k for k in results if k.startswith("catalog_")), key=lambda k: results[k]["count"])
    for key in keys:
        r = results[key]
        n = r["count"]
        scope = f"{n:,} issues"

        def add(label, name, value, measured):
            target = target_of(n, name)
            if target is None:
                report.row(f"{label}, {scope}", value, target="— (info)")
            else:
                report.row(f"{label}, {scope}", value, target=target[1], ok=met(measured <= target[0]))

        imp = r["import"]
        add(f"`issues import` (JSONL, {fmt_bytes(r['source_bytes'])})", "import_s",
            f"{spread(imp)}; {n / imp['median']:,.0f} issues/s" + ("" if r["import_runs"] > 1 else " (1 run)"),
            imp["median"])
        if n >= 1_000_000:
            irss = r["import_rss_kib"]
            add("peak RSS of `issues import`", "import_rss_kib", f"{fmt_kib(irss['max'])} (max)", irss["max"])
        add("`issues list > /dev/null`", "list_s", spread(r["list"]), r["list"]["median"])
        rss = r["list_rss_kib"]
        add("peak RSS of `issues list`", "list_rss_kib",
            f"{fmt_kib(rss['max'])} (max; min {fmt_kib(rss['min'])})", rss["max"])
        add("`issues list --json > /dev/null`", "list_json_s", spread(r["list_json"]), r["list_json"]["median"])
        add("`issues show NAME` (a random issue)", "show_s", spread(r["show"]), r["show"]["median"])
        add("`issues add NEW --date … --asset URL`", "add_s", spread(r["add"]), r["add"]["median"])
        if "prune" in r:
            add("`issues prune --dry-run --keep 2`", "prune_s", spread(r["prune"]) +
                f"; {fmt_kib(r['prune_rss_kib']['max'])}", r["prune"]["median"])
            add("`issues verify`", "verify_s", spread(r["verify"]) + f"; {fmt_kib(r['verify_rss_kib']['max'])}",
                r["verify"]["median"])
        if "sync" in r:
            add(f"`issues sync --no-download` of a {SYNC_ITEMS:,}-item feed", "sync_s",
                spread(r["sync"]) + f"; {fmt_kib(r['sync_rss_kib']['max'])}", r["sync"]["median"])
        report.row(f"catalog on disk (`du -sb .catalog`), {scope}",
                   f"{fmt_bytes(r['catalog_bytes'])} ({fmt_bytes(r['catalog_allocated'])} allocated, "
                   f"{r['catalog_files']:,} inodes)", target="— (info)")
        for cmd, label in (("import", "import"), ("list", "list"), ("list_json", "list --json"),
                           ("show", "show"), ("add", "add"), ("prune", "prune --dry-run --keep 2"),
                           ("verify", "verify"), ("sync", "sync --no-download")):
            if cmd not in r:
                continue
            report.detail(f"catalog {scope}: issues {label}", r[cmd],
                          f"RSS max {fmt_kib(r[cmd + '_rss_kib']['max'])}, min {fmt_kib(r[cmd + '_rss_kib']['min'])}")
        report.details.append(f"| catalog {scope}: on disk | | | | `.catalog` {r['catalog_bytes']:,} bytes "
                              f"(`du -sb`), {r['catalog_allocated']:,} allocated, {r['catalog_files']:,} inodes; "
                              f"whole library {r['library_bytes']:,} bytes, {r['library_files']:,} inodes; "
                              f"import file {r['source_bytes']:,} bytes, URLs {r['url_avg_chars']} characters on "
                              f"average |")


NOTES = [
    "- **Catalog**: each library is built by `issues import --quiet FILE` from a generated JSON Lines file "
    "(timed: the `import` row; run `--runs` times into fresh libraries, once at 1,000,000): periodicals "
    "(20 to 2,000 titles such as \"The Harbour Gazette\" or \"Leipzig Cyclist\"; daily, weekly and monthly, "
    "so dates spread over years to decades), each issue with two assets (a PDF and a ZIP to unpack) on a "
    "CDN-style URL of about 100 characters with a sha256 value. Then, `--runs` times: `issues list` and "
    "`issues list --json` with stdout to /dev/null (time and peak RSS), `issues show NAME` of a random "
    "existing issue, and `issues add NEW --date … --asset URL` with a new name each run (so the library "
    "grows by one issue per run). `sync` before every timed command. Checked untimed: import reports N "
    "added and 0 refused; `list` prints at least N lines; `list --json` holds N issues; `show` prints the "
    "name; an added issue can be shown. Up to 100,000 issues, also each run: `issues prune --dry-run --keep 2` "
    "(the plan over every issue: two newest kept per publication) and `issues verify` (no `--repair`), stdout to "
    "/dev/null. At 100,000 issues, `--runs` times into a fresh copy of the library: `issues sync --no-download` of an "
    "RSS feed (served from memory, no validators) that grew from the 1 item subscribed to 5,000; checked: 4,999 added. "
    "Size on disk: `du -sb` (apparent), `du -sB1` (allocated) and "
    "`du --inodes` of `.catalog`. The targets are SPEC.md's for 100,000 issues, applied to smaller "
    "libraries too (and `list` ≤ 0.2 s at 100,000, issue 32); at 1,000,000 issues `import` (≤ 90 s, "
    "peak ≤ 128 MiB), `list` (≤ 1 s, ≤ 128 MiB), `show` and `add` have targets (`--only catalog-1m`; part of a "
    "full run, not of `--quick`).",
]
