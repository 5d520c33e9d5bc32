"""Large asset: one big random file over loopback, `issues download` vs `curl -o`; throughput ratio and
the peak resident memory of the `issues` process."""

import os

from harness import (MiB, GiB, expect_file, fmt_kib, fmt_mibs, log, met, rm, stats, write_random)

ONLY = ("large",)
NEEDS_NGINX = True
TOOLS = ("curl",)
FULL = dict(large=1 * GiB)
QUICK = dict(large=64 * MiB)

RSS_TARGET_KIB = 32 * 1024  # SPEC.md: peak resident memory ≤ 32 MiB


def plan(ctx, only):
    return [("large", "Large asset + peak RSS", lambda: large(ctx))] if "large" in only else []


def large(ctx):
    size = ctx.sizes["large"]
    log(f"large: generating {size // MiB} MiB of random data")
    src = os.path.join(ctx.www, "large.bin")
    digest = write_random(src, size, want_hash=True)
    url = ctx.nginx.url("large.bin")
    curl_t, curl_rss, curl_sync_t, iss_t, iss_rss, nofsync_t = [], [], [], [], [], []
    for i in range(ctx.runs):
        tools = ("curl", "curl_sync", "issues", "issues_nofsync")
        order = tools[i % 4:] + tools[:i % 4]
        for tool in order:
            if tool in ("curl", "curl_sync"):
                out = os.path.join(ctx.fresh("curl-large"), "large.bin")
                os.makedirs(os.path.dirname(out))
                if tool == "curl":
                    r = ctx.run(["curl", "-s", "-o", out, url]).check("curl")
                    curl_t.append(r.seconds)
                    curl_rss.append(r.maxrss_kib)
                else:
                    # The like-for-like reference for the default download: curl, then the file flushed to
                    # disk (coreutils `sync FILE` is an fsync of that file), as `issues` does before it
                    # records the asset as downloaded.
                    r = ctx.run(["sh", "-c", 'curl -s -o "$1" "$2" && sync "$1"', "curl+sync", out, url]).check(
                        "curl && sync")
                    curl_sync_t.append(r.seconds)
                expect_file(out, size, digest if i == 0 else None)
                rm(os.path.dirname(out))
            else:
                lib = ctx.new_library("lib-large", "Large", [url])
                r = ctx.issues_download(lib, extra=["--no-fsync"] if tool == "issues_nofsync" else [])
                expect_file(os.path.join(lib, "Large", "large.bin"), size, digest if i == 0 else None)
                if tool == "issues":
                    iss_t.append(r.seconds)
                    iss_rss.append(r.maxrss_kib)
                else:
                    nofsync_t.append(r.seconds)
                rm(lib)
            times = {"curl": curl_t, "curl_sync": curl_sync_t, "issues": iss_t, "issues_nofsync": nofsync_t}[tool]
            log(f"large run {i + 1}/{ctx.runs}: {tool} {times[-1]:.2f} s")
    rm(src)
    return dict(size=size, curl=stats(curl_t), curl_sync=stats(curl_sync_t), issues=stats(iss_t),
                issues_nofsync=stats(nofsync_t),
                curl_rss_kib=stats(curl_rss), issues_rss_kib=stats(iss_rss))


def render(results, report):
    r = results.get("large")
    if not r:
        return
    size = r["size"]
    ti, tc = r["issues"]["median"], r["curl"]["median"]
    ratio = tc / ti  # = throughput(issues) / throughput(curl)
    report.rows.append(f"| Large asset ({size // MiB} MiB), throughput | {fmt_mibs(size, ti)} | "
                       f"curl {fmt_mibs(size, tc)} | {ratio:.2f} | ≥ 1.0 | {met(ratio >= 1.0)} |")
    if "curl_sync" in r:
        ts = r["curl_sync"]["median"]
        report.rows.append(f"| Large asset, flushed to disk by both (`curl -o F && sync F`) | {fmt_mibs(size, ti)} | "
                           f"curl + sync {fmt_mibs(size, ts)} | {ts / ti:.2f} | — (info) | — |")
        report.detail(f"large: curl -o F && sync F ({size // MiB} MiB)", r["curl_sync"], fmt_mibs(size, ts))
    if "issues_nofsync" in r:
        tn = r["issues_nofsync"]["median"]
        report.rows.append(f"| Large asset, `--no-fsync` (no flush to disk, as curl) | {fmt_mibs(size, tn)} | "
                           f"curl {fmt_mibs(size, tc)} | {tc / tn:.2f} | — (info) | — |")
        report.detail(f"large: issues download --no-fsync ({size // MiB} MiB)", r["issues_nofsync"],
                      fmt_mibs(size, tn))
    rss = r["issues_rss_kib"]["max"]
    report.rows.append(f"| Peak RSS during the {size // MiB} MiB download | {fmt_kib(rss)} | "
                       f"curl {fmt_kib(r['curl_rss_kib']['max'])} | — | ≤ 32 MiB | {met(rss <= RSS_TARGET_KIB)} |")
    report.detail(f"large: issues download ({size // MiB} MiB)", r["issues"],
                  f"{fmt_mibs(size, ti)}; RSS max {fmt_kib(r['issues_rss_kib']['max'])}, "
                  f"min {fmt_kib(r['issues_rss_kib']['min'])}")
    report.detail(f"large: curl -o ({size // MiB} MiB)", r["curl"],
                  f"{fmt_mibs(size, tc)}; RSS max {fmt_kib(r['curl_rss_kib']['max'])}")


NOTES = [
    "- **Large asset**: `curl -s -o FILE URL` vs `issues download` into a fresh library holding one "
    "issue with that asset. Ratio = issues' throughput / curl's (MiB = 2^20 bytes). Size is checked "
    "on every run, SHA-256 on the first. `issues download` flushes the file to disk (fsync) before recording it "
    "as downloaded and curl does not, so on a slow disk the flush decides the ratio. The `curl && sync` row "
    "flushes curl's file too (like for like); the `--no-fsync` row is the same download without the flush, "
    "which also starts no writeback while it writes (the bytes stay in the page cache, as curl leaves them).",
    "- **Peak RSS**: `ru_maxrss` from `os.wait4` on the process spawned (the largest over the runs). Every "
    "command is spawned through `bench/launch.py`, a small process that times and reaps it, because Linux "
    "starts a child's `ru_maxrss` at its parent's resident set: spawned straight from the benchmark's Python "
    "process, `/bin/true` reads as large as that process. The floor is now the launcher's ~5 MiB.",
]
