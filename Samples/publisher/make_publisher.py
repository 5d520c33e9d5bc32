#!/usr/bin/env python3
"""Generates a sample publisher: a few publications with dated issues, and catalog.json.

    python3 Samples/publisher/make_publisher.py --out DIR [--big-mib N]

Everything is derived from fixed seeds and fixed timestamps, so the files (and the sha256 values in
the catalog) are the same on every run with the same Python and zlib. Standard library only.

Layout under DIR (paths relative to the server root):

    daily-loop/the-daily-loop-2026-11-18.zip       3 daily issues: ZIPs of HTML pages, CSS, JSON and
    daily-loop/the-daily-loop-2026-11-19.zip       binary "images" in nested folders (the first one
    daily-loop/the-daily-loop-2026-11-20.zip       with unicode file names)
    quarterly-review/quarterly-review-2026-q4.tar.gz   1 issue as a gzip-compressed tar
    podcast/loopback-041.mp3                        2 episodes as plain binary "audio" files, the
    podcast/loopback-042.mp3                        second one large (48 MiB by default)
    field-notes/field-notes-2026-11.pdf             a plain PDF-like file (starts with %PDF-1.4)
    catalog.json                                    publications -> issues -> assets
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import sys
import tarfile
import time
import zipfile

MIB = 1024 * 1024
# 2026-11-20 06:00:00 UTC: archive entries get this time (a daily issue: its own day, 06:00).
FIXED_MTIME = 1795154400


def rng(label):
    """A random generator seeded from a label, so each file's bytes are independent and fixed."""
    return random.Random(int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "big"))


def binary(label, size, header=b""):
    """`size` pseudo-random bytes starting with `header` (an image or audio look-alike)."""
    r = rng(label)
    out = bytearray(header)
    while len(out) < size:
        out += r.randbytes(min(MIB, size - len(out)))
    return bytes(out[:size])


def html_page(title, date, body_paragraphs):
    paragraphs = "\n".join(f"  <p>{p}</p>" for p in body_paragraphs)
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n"
        f"  <title>{title}</title>\n  <link rel=\"stylesheet\" href=\"../style/site.css\">\n</head>\n"
        f"<body>\n  <h1>{title}</h1>\n  <p class=\"date\">{date}</p>\n{paragraphs}\n</body>\n</html>\n"
    ).encode("utf-8")


WORDS = (
    "loopback socket packet resume range validator manifest archive unpack issue edition press "
    "morning evening column headline byline reader library folder atomic rename journal cursor"
).split()


def paragraphs(label, count):
    r = rng(label)
    return [" ".join(r.choice(WORDS) for _ in range(r.randint(25, 60))).capitalize() + "." for _ in range(count)]


def daily_files(date, unicode_names):
    """The entries of one daily issue: (path inside the archive, bytes)."""
    title = f"The Daily Loop — {date}"
    files = [
        ("index.html", html_page(title, date, paragraphs(f"daily/{date}/index", 3))),
        ("style/site.css", b"body { font-family: serif; max-width: 40em; margin: auto; }\n.date { color: #666; }\n"),
        ("meta/issue.json", json.dumps({"title": title, "date": date, "pages": 3}, indent=2).encode() + b"\n"),
    ]
    for n in range(1, 4):
        files.append((f"pages/{n:02d}-story.html", html_page(f"{title}: story {n}", date, paragraphs(f"daily/{date}/{n}", 6))))
    files.append(("images/cover.jpg", binary(f"daily/{date}/cover", 180_000, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")))
    files.append(("images/thumbs/cover-small.jpg", binary(f"daily/{date}/thumb", 12_000, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")))
    files.append(("images/photos/2026/11/front-page.png", binary(f"daily/{date}/front", 250_000, b"\x89PNG\r\n\x1a\n")))
    if unicode_names:
        files.append(("pages/04-café-crème.html", html_page(f"{title}: Café crème", date, paragraphs(f"daily/{date}/cafe", 4))))
        files.append(("images/日本語/写真-東京.jpg", binary(f"daily/{date}/tokyo", 90_000, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")))
        files.append(("Ελληνικά/σημειώσεις.txt", "Σημειώσεις της έκδοσης.\nNotes of this edition.\n".encode("utf-8")))
    return files


def write_zip(path, files, mtime):
    """A ZIP with fixed timestamps and permissions: text deflated, binaries stored (as real tools do)."""
    date_time = tuple(time.gmtime(mtime)[:6])
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = 0o100644 << 16
            info.create_system = 3  # Unix, so the permission bits are read
            textual = name.endswith((".html", ".css", ".json", ".txt"))
            info.compress_type = zipfile.ZIP_DEFLATED if textual else zipfile.ZIP_STORED
            archive.writestr(info, data)


def write_tar_gz(path, files, mtime):
    """A gzip-compressed tar with directory entries, fixed owners, modes and timestamps."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        folders = sorted({os.path.dirname(name) for name, _ in files} - {""})
        every = set()
        for folder in folders:
            parts = folder.split("/")
            every.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        for folder in sorted(every):
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
            archive.addfile(info)
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            archive.addfile(info, io.BytesIO(data))
    with open(path, "wb") as out:
        # mtime=0 and no file name in the gzip header keep the bytes reproducible.
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) as compressed:
            compressed.write(raw.getvalue())


def quarterly_files():
    title = "Quarterly Review — Q4 2026"
    files = [("README.txt", b"Quarterly Review, fourth quarter 2026. Start with contents.html.\n")]
    files.append(("contents.html", html_page(title, "2026-10-01", paragraphs("quarterly/contents", 2))))
    for n in range(1, 6):
        files.append((f"essays/{n:02d}/essay.html", html_page(f"{title}: essay {n}", "2026-10-01", paragraphs(f"quarterly/{n}", 12))))
        files.append((f"essays/{n:02d}/figures/figure-1.png", binary(f"quarterly/{n}/fig", 60_000 + n * 7_000, b"\x89PNG\r\n\x1a\n")))
    r = rng("quarterly/survey")
    files.append(("data/tables/survey.csv", "".join(f"{i},{r.randint(0, 999)}\n" for i in range(500)).encode()))
    return files


def pdf_bytes():
    """A small PDF-like document: a real header and trailer around seeded filler."""
    body = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    filler = binary("field-notes/stream", 300_000)
    body += b"2 0 obj\n<< /Length %d >>\nstream\n" % len(filler) + filler + b"\nendstream\nendobj\n"
    return body + b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"


def entry(out, path, unpack):
    full = os.path.join(out, path)
    digest = hashlib.sha256()
    with open(full, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            digest.update(block)
    return {"path": path, "sha256": digest.hexdigest(), "size": os.path.getsize(full), "unpack": unpack}


def write(out, path, data):
    full = os.path.join(out, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)


def main():
    parser = argparse.ArgumentParser(description="Generate the sample publisher and its catalog.json.")
    parser.add_argument("--out", required=True, help="output folder (created; existing files are replaced)")
    parser.add_argument("--big-mib", type=int, default=48, help="size of the large podcast episode in MiB (default 48)")
    args = parser.parse_args()
    if args.big_mib < 1:
        parser.error("--big-mib must be at least 1")
    out = args.out
    os.makedirs(out, exist_ok=True)

    publications = []

    daily = []
    for i, date in enumerate(["2026-11-18", "2026-11-19", "2026-11-20"]):
        path = f"daily-loop/the-daily-loop-{date}.zip"
        os.makedirs(os.path.join(out, "daily-loop"), exist_ok=True)
        write_zip(os.path.join(out, path), daily_files(date, unicode_names=(i == 0)), FIXED_MTIME - (2 - i) * 86400)
        daily.append({"name": f"The Daily Loop {date}", "date": date, "assets": [entry(out, path, True)]})
    publications.append({"title": "The Daily Loop", "issues": daily})

    path = "quarterly-review/quarterly-review-2026-q4.tar.gz"
    os.makedirs(os.path.join(out, "quarterly-review"), exist_ok=True)
    write_tar_gz(os.path.join(out, path), quarterly_files(), FIXED_MTIME)
    publications.append({
        "title": "Quarterly Review",
        "issues": [{"name": "Quarterly Review 2026 Q4", "date": "2026-10-01", "assets": [entry(out, path, True)]}],
    })

    id3 = b"ID3\x04\x00\x00\x00\x00\x00\x00"
    episodes = []
    for number, date, size in [(41, "2026-11-13", 3 * MIB), (42, "2026-11-20", args.big_mib * MIB)]:
        path = f"podcast/loopback-{number:03d}.mp3"
        write(out, path, binary(f"podcast/{number}", size, id3))
        episodes.append({"name": f"Loopback Podcast #{number}", "date": date, "assets": [entry(out, path, False)]})
    publications.append({"title": "Loopback Podcast", "issues": episodes})

    path = "field-notes/field-notes-2026-11.pdf"
    write(out, path, pdf_bytes())
    publications.append({
        "title": "Field Notes",
        "issues": [{"name": "Field Notes November 2026", "date": "2026-11-01", "assets": [entry(out, path, False)]}],
    })

    catalog = {"version": 1, "publisher": "Loopback Press", "publications": publications}
    with open(os.path.join(out, "catalog.json"), "w", encoding="utf-8") as f:
        json.dump(catalog, f, indent=2, ensure_ascii=False)
        f.write("\n")
    count = sum(len(p["issues"]) for p in publications)
    print(f"wrote {count} issues of {len(publications)} publications to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
