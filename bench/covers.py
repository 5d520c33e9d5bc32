"""Covers: `issues covers` over a library of mixed issues (feed-style images, EPUBs, CBZs, PDFs, a quarter each),
already downloaded (`--no-covers`), so the row times only the covers. The median milliseconds per cover come from
`covers --json` (each outcome's `milliseconds`), the peak resident set from the whole process.
SPEC.md: median ≤ 150 ms per issue, peak ≤ 64 MiB.

The corpus is made with the `vips` command (libvips-tools): blurred noise, photo-like, 1600 × 2100 JPEGs (a
magazine cover's size), reused across issues (each issue's copy is decoded on its own; libvips keeps no cache)."""

import json
import os
import statistics
import zipfile

from harness import BenchError, MiB, fmt_kib, log, met, rm

ONLY = ("covers",)
NEEDS_NGINX = True
TOOLS = ("vips",)
FULL = dict(cover_issues=1000)
QUICK = dict(cover_issues=40)


def plan(ctx, only):
    return [("covers", "Covers", lambda: covers(ctx))] if "covers" in only else []


def pdf(title):
    """A one-page PDF with a filled page, shapes and a title (what page 1 of a magazine asks of poppler)."""
    shapes = " ".join(f"{0.1 * (n % 10):.1f} 0.4 0.6 rg {40 + 50 * (n % 10)} {80 + 60 * (n // 10)} 40 40 re f"
                      for n in range(60))
    content = (f"0.95 0.9 0.8 rg 0 0 612 792 re f {shapes} "
               f"BT /F1 40 Tf 0.1 0.1 0.1 rg 60 700 Td ({title}) Tj ET\n").encode()
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


def images(ctx, folder, count=6):
    """`count` distinct photo-like JPEGs, 1600 × 2100."""
    paths = []
    for n in range(count):
        noise, blurred, path = (os.path.join(folder, f"{name}-{n}.{ext}") for name, ext in
                                (("noise", "v"), ("blur", "v"), ("img", "jpg")))
        ctx.run(["vips", "gaussnoise", noise, "1600", "2100", "--sigma", str(20 + 10 * n), "--seed", str(n)]).check("vips")
        ctx.run(["vips", "gaussblur", noise, blurred, "5"]).check("vips")
        rm(noise)
        ctx.run(["vips", "colourspace", blurred, noise, "srgb"]).check("vips")
        ctx.run(["vips", "jpegsave", noise, path, "--Q", "85"]).check("vips")
        rm(blurred)
        rm(noise)
        paths.append(path)
    return paths


def corpus(ctx, count):
    """The served files and the import lines of `count` issues, a quarter of each kind."""
    folder = os.path.join(ctx.www, "covers")
    os.makedirs(folder, exist_ok=True)
    jpegs = images(ctx, folder)
    data = [open(p, "rb").read() for p in jpegs]
    with open(os.path.join(folder, "issue.pdf"), "wb") as f:
        f.write(pdf("Bench"))
    with zipfile.ZipFile(os.path.join(folder, "book.epub"), "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml",
                      '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                      '<rootfile full-path="OEBPS/content.opf"/></rootfiles></container>')
        book.writestr("OEBPS/content.opf",
                      '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>'
                      '<item id="c" href="images/cover.jpg" media-type="image/jpeg" properties="cover-image"/>'
                      '</manifest></package>')
        book.writestr("OEBPS/images/cover.jpg", data[0])
    with zipfile.ZipFile(os.path.join(folder, "comic.cbz"), "w", zipfile.ZIP_STORED) as comic:
        for page in range(4):
            comic.writestr(f"pages/{page + 1:02d}.jpg", data[(page + 1) % len(data)])
    lines = []
    for n in range(count):
        kind = n % 4
        url = [ctx.nginx.url(f"covers/img-{n % len(jpegs)}.jpg"), ctx.nginx.url("covers/book.epub"),
               ctx.nginx.url("covers/comic.cbz"), ctx.nginx.url("covers/issue.pdf")][kind]
        lines.append(json.dumps({"name": f"Cover {n:04d}", "date": "2026-11-20", "assets": [{"url": url}]}))
    imports = os.path.join(ctx.work, "covers-import.jsonl")
    with open(imports, "w") as f:
        f.write("\n".join(lines) + "\n")
    return folder, imports


def covers(ctx):
    count = ctx.sizes["cover_issues"]
    folder, imports = corpus(ctx, count)
    runs = []
    for i in range(ctx.runs):
        lib = ctx.fresh("lib-covers")
        ctx.run(ctx.issues_cmd("import", imports, "--library", lib)).check("issues import")
        ctx.issues_download(lib, jobs=8, extra=("--no-covers",))
        r = ctx.run(ctx.issues_cmd("covers", "--json", "--library", lib)).check("issues covers")
        outcomes = json.loads(r.stdout)
        made = [o for o in outcomes if o.get("cover")]
        if len(made) != count:
            raise BenchError(f"covers made {len(made)} of {count}: {[o for o in outcomes if not o.get('cover')][:3]}")
        by_source = {}
        for o in made:
            by_source.setdefault(o["cover"]["source"], []).append(o["milliseconds"])
        expected = {"image", "epub", "cbz", "pdf"}
        if set(by_source) != expected:
            raise BenchError(f"covers came from {sorted(by_source)}, not {sorted(expected)}")
        all_ms = [ms for values in by_source.values() for ms in values]
        runs.append(dict(median=statistics.median(all_ms), seconds=r.seconds, maxrss_kib=r.maxrss_kib,
                         by_source={k: statistics.median(v) for k, v in by_source.items()}))
        log(f"covers run {i + 1}/{ctx.runs}: {count} covers in {r.seconds:.1f} s, median "
            f"{runs[-1]['median']:.0f} ms, peak {fmt_kib(r.maxrss_kib)}")
        rm(lib)
    rm(folder)
    best = sorted(runs, key=lambda run: run["median"])[len(runs) // 2]
    return dict(count=count, median_ms=best["median"], seconds=best["seconds"], by_source=best["by_source"],
                maxrss_kib=max(run["maxrss_kib"] for run in runs))


def render(results, report):
    if "covers" not in results:
        return
    r = results["covers"]
    sources = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["by_source"].items()))
    report.row(f"Covers: {r['count']} mixed issues (median ms per cover; by source: {sources})",
               f"{r['median_ms']:.0f} ms, peak {fmt_kib(r['maxrss_kib'])}", reference=f"{r['seconds']:.1f} s in all",
               target="≤ 150 ms, ≤ 64 MiB",
               ok=met(r["median_ms"] <= 150 and r["maxrss_kib"] <= 64 * 1024))


NOTES = [
    "- **Covers**: `issues covers --json` over a library of mixed issues downloaded beforehand with `--no-covers` "
    "(photo-like 1600 × 2100 JPEGs as the issues' images, EPUBs declaring such a cover, 4-page CBZs, one-page PDFs "
    "with shapes and text); the median is of each cover's own time (`milliseconds`), the peak is the process's. "
    "The download rows pass `--no-covers` so that they time the engine alone.",
]
