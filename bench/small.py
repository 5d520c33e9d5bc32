"""Many small assets (issue 32): 2,000 issues of one 64 KiB asset each, `issues download --jobs 8`,
over plain HTTP vs one sequential `curl -K` of the list (and aria2c), and over HTTPS from nginx with
HTTP/2 vs `curl --parallel --parallel-max 8 --http2` (and aria2c, HTTP/1.1); and the peak resident
memory of a download of 10,000 queued assets.

Starts its own nginx (plain HTTP and an `ssl http2` server) with a CA and a server certificate made
here with openssl, as service.py starts its own."""

import json
import os
import subprocess

from harness import ENV, BenchError, Nginx, fmt_kib, fmt_s, log, met, rm, stats, tail

ONLY = ("small",)
NEEDS_NGINX = False  # its own, with TLS
TOOLS = ("curl", "aria2c", "openssl")
KiB = 1024
FULL = dict(small_count=2000, small_size=64 * KiB, small_queue=10_000, small_queue_runs=1)
QUICK = dict(small_count=200, small_size=64 * KiB, small_queue=1000, small_queue_runs=1)

TARGET = 0.8  # SPEC.md: ≤ 0.8 × one sequential curl -K (HTTP), ≤ 0.8 × curl --parallel --http2 (HTTPS)
RSS_TARGET_MIB = 64  # SPEC.md: a download of 10,000 queued assets keeps peak memory ≤ 64 MiB


def plan(ctx, only):
    return [("small", "Small assets", lambda: small(ctx))] if "small" in only else []


def make_ca(folder):
    """A private CA and a server certificate for 127.0.0.1 signed by it (EC P-256, two days)."""
    os.makedirs(folder, exist_ok=True)
    ca_key, ca, key, csr, cert, ext = (os.path.join(folder, n) for n in
                                       ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem", "server.ext"))
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for cmd in (["req", "-x509", *curve, "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=issues bench CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
                ["req", "-new", *curve, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
                 "-days", "2", "-extfile", ext]):
        p = subprocess.run(["openssl", *cmd], capture_output=True, text=True, env=ENV)
        if p.returncode != 0:
            raise BenchError(f"openssl {cmd[0]} failed: {tail(p.stderr)}")
    return ca, cert, key


def small(ctx):
    count, size = ctx.sizes["small_count"], ctx.sizes["small_size"]
    queue, queue_runs = ctx.sizes["small_queue"], ctx.sizes["small_queue_runs"]
    work = ctx.fresh("small")
    www = os.path.join(work, "www")
    os.makedirs(os.path.join(www, "small"))
    with open(os.path.join(www, "ready.txt"), "w") as f:
        f.write("ok\n")
    log(f"small: generating {count} x {size // KiB} KiB and a CA")
    names = [f"a-{i:05d}.bin" for i in range(count)]
    for name in names:
        with open(os.path.join(www, "small", name), "wb") as f:
            f.write(os.urandom(size))
    ca, cert, key = make_ca(os.path.join(work, "ca"))
    nginx = Nginx(work, www)
    nginx.tls = (cert, key)
    nginx.start()
    log(f"small: nginx on 127.0.0.1:{nginx.port} (http) and :{nginx.tls_port} (https, h2)")
    try:
        # The handshake's protocol, checked once: the HTTPS rows are about HTTP/2.
        p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_version}", "--http2", "--cacert", ca,
                            nginx.tls_url("ready.txt")], capture_output=True, text=True, env=ENV)
        if p.stdout.strip() != "2":
            raise BenchError(f"nginx's TLS server did not answer over HTTP/2 ({p.stdout!r} {tail(p.stderr)})")
        out = {"count": count, "size": size}
        out["http"] = compare(ctx, work, names, size, [nginx.url(f"small/{n}") for n in names], ca=None)
        out["h2"] = compare(ctx, work, names, size, [nginx.tls_url(f"small/{n}") for n in names], ca=ca)
        out["queue"] = queued(ctx, work, queue, queue_runs, [nginx.url(f"small/{n}") for n in names], size)
        return out
    finally:
        nginx.stop()
        rm(work)


def import_file(path, urls, count):
    """JSON Lines for `issues import`: `count` issues of one asset each, cycling through `urls`."""
    with open(path, "w") as f:
        for i in range(count):
            f.write(json.dumps({"name": f"Small {i:05d}", "date": "2026-11-20",
                                "assets": [{"url": urls[i % len(urls)]}]}) + "\n")


def library(ctx, work, imports):
    lib = ctx.fresh("lib-small", work)
    ctx.run(ctx.issues_cmd("import", "--quiet", "--library", lib, imports)).check("issues import")
    return lib


def verify_library(lib, count, size, what):
    found = 0
    for entry in os.scandir(lib):
        if entry.is_dir() and entry.name.startswith("Small "):
            for f in os.scandir(entry.path):
                if f.name.endswith(".bin"):
                    if f.stat().st_size != size:
                        raise BenchError(f"{what}: {f.path} has {f.stat().st_size} bytes, expected {size}")
                    found += 1
    if found != count:
        raise BenchError(f"{what}: {found} assets in {lib}, expected {count}")


def verify_folder(folder, count, size, what):
    files = [e for e in os.scandir(folder) if e.is_file()]
    if len(files) != count or any(e.stat().st_size != size for e in files):
        raise BenchError(f"{what}: {len(files)} files in {folder}, expected {count} of {size} bytes")


def compare(ctx, work, names, size, urls, ca):
    count = len(urls)
    label = "h2" if ca else "http"
    imports = os.path.join(work, f"import-{label}.jsonl")
    import_file(imports, urls, count)
    config = os.path.join(work, f"curl-{label}.cfg")
    with open(config, "w") as f:
        for url, name in zip(urls, names):
            f.write(f'url = "{url}"\noutput = "{name}"\n')
    url_list = os.path.join(work, f"urls-{label}.txt")
    with open(url_list, "w") as f:
        f.write("".join(u + "\n" for u in urls))
    tls = ["--cacert", ca] if ca else []
    times = {"issues": [], "curl": [], "aria2c": []}
    rss = []
    tools = list(times)
    for i in range(ctx.runs):
        for tool in tools[i % 3:] + tools[:i % 3]:  # rotate the order between runs
            if tool == "issues":
                lib = library(ctx, work, imports)
                r = ctx.issues_download(lib, jobs=8, extra=tls)
                verify_library(lib, count, size, "issues download")
                rss.append(r.maxrss_kib)
                rm(lib)
            elif tool == "curl":
                out = ctx.fresh(f"curl-{label}", work)
                os.makedirs(out)
                cmd = ["curl", "-s", "-K", config]
                if ca:
                    cmd = ["curl", "-s", "--parallel", "--parallel-max", "8", "--http2", "--cacert", ca, "-K", config]
                r = ctx.run(cmd, cwd=out).check("curl")
                verify_folder(out, count, size, "curl")
                rm(out)
            else:
                out = ctx.fresh(f"aria2c-{label}", work)
                os.makedirs(out)
                cmd = ["aria2c", "-j8", "-x1", "-i", url_list, "-d", out, "--allow-overwrite=true",
                       "--auto-file-renaming=false", "-q"]
                if ca:
                    cmd.append(f"--ca-certificate={ca}")
                r = ctx.run(cmd).check("aria2c")
                verify_folder(out, count, size, "aria2c")
                rm(out)
            times[tool].append(r.seconds)
            log(f"small {label} run {i + 1}/{ctx.runs}: {tool} {r.seconds:.2f} s")
    return dict(**{k: stats(v) for k, v in times.items()}, maxrss_kib=max(rss))


def queued(ctx, work, count, runs, urls, size):
    imports = os.path.join(work, "import-queue.jsonl")
    import_file(imports, urls, count)
    rss, times = [], []
    for i in range(runs):
        lib = library(ctx, work, imports)
        r = ctx.issues_download(lib, jobs=8)
        verify_library(lib, count, size, "issues download (queue)")
        rm(lib)
        rss.append(r.maxrss_kib)
        times.append(r.seconds)
        log(f"small queue run {i + 1}/{runs}: {count} assets {r.seconds:.2f} s, peak RSS {r.maxrss_kib / 1024:.1f} MiB")
    return dict(count=count, maxrss_kib=max(rss), rss_samples=rss, seconds=stats(times))


def ratio_text(a, b):
    """Median ratio, and the spread: the smallest and largest ratio of any two runs' times."""
    lo, hi = a["min"] / b["max"], a["max"] / b["min"]
    return a["median"] / b["median"], f"{a['median'] / b['median']:.2f} ({lo:.2f}–{hi:.2f})"


def render(results, report):
    r = results.get("small")
    if not r:
        return
    n, kib = r["count"], r["size"] // KiB
    http, h2 = r["http"], r["h2"]
    ratio, text = ratio_text(http["issues"], http["curl"])
    report.rows.append(
        f"| Small assets ({n:,} × {kib} KiB, HTTP), `--jobs 8`, wall time | {fmt_s(http['issues']['median'])} | "
        f"curl -K (sequential) {fmt_s(http['curl']['median'])} (aria2c -j8 {fmt_s(http['aria2c']['median'])}) | "
        f"{text} | ≤ 0.8 | {met(ratio <= TARGET)} |")
    ratio, text = ratio_text(h2["issues"], h2["curl"])
    report.rows.append(
        f"| Small assets ({n:,} × {kib} KiB, HTTPS + HTTP/2), `--jobs 8`, wall time | {fmt_s(h2['issues']['median'])} | "
        f"curl --parallel-max 8 --http2 {fmt_s(h2['curl']['median'])} (aria2c -j8, HTTP/1.1, "
        f"{fmt_s(h2['aria2c']['median'])}) | {text} | ≤ 0.8 | {met(ratio <= TARGET)} |")
    q = r["queue"]
    report.rows.append(
        f"| Peak RSS, {q['count']:,} queued small assets, `--jobs 8` | {fmt_kib(q['maxrss_kib'])} | — | — | "
        f"≤ {RSS_TARGET_MIB} MiB | {met(q['maxrss_kib'] <= RSS_TARGET_MIB * 1024)} |")
    for label, data in (("HTTP", http), ("HTTPS h2", h2)):
        report.detail(f"small ({label}): issues download --jobs 8", data["issues"],
                      f"{(data['issues']['median'] / n) * 1000:.2f} ms/asset; peak RSS {fmt_kib(data['maxrss_kib'])}")
        report.detail(f"small ({label}): curl", data["curl"], f"{(data['curl']['median'] / n) * 1000:.2f} ms/asset")
        report.detail(f"small ({label}): aria2c -j8", data["aria2c"])
    report.detail(f"small: issues download of {q['count']:,} queued assets", q["seconds"],
                  f"peak RSS {fmt_kib(q['maxrss_kib'])}")


NOTES = [
    "- **Small assets**: 2,000 issues of one 64 KiB asset each (imported, not timed), `issues download --jobs 8` "
    "(with its flush of each file and of the catalog) vs one `curl -s -K LIST` process fetching them in sequence "
    "over one connection (HTTP) and `curl -s --parallel --parallel-max 8 --http2 --cacert CA -K LIST` (HTTPS from "
    "nginx's `listen ssl http2`, CA made by the bench with openssl); aria2c `-j8 -x1` for reference (HTTP/1.1 only). "
    "Ratios are medians, with the spread in brackets (fastest issues run / slowest reference run – slowest / "
    "fastest). The queued row downloads 10,000 such issues (the 2,000 URLs cycled) once and reports its peak RSS.",
]
