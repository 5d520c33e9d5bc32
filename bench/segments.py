"""Segmented downloads (`--segments 8`): against nginx capping each connection (`limit_rate`), one
64 MiB asset over 8 connections vs one connection vs `aria2c -x8 -s8`; and unthrottled, the large file
with `--segments 8` vs one connection (SPEC.md: ≥ 7 × one connection throttled; ≤ 1.05 × its time
unthrottled)."""

import os

from harness import (GiB, MiB, THROTTLE_PER_CONNECTION, expect_file, fmt_mibs, log, met, rm, stats,
                     write_random)

ONLY = ("segments",)
NEEDS_NGINX = True
TOOLS = ("aria2c",)
FULL = dict(seg_throttled=64 * MiB, seg_large=1 * GiB)
QUICK = dict(seg_throttled=16 * MiB, seg_large=64 * MiB)


def plan(ctx, only):
    return [("segments", "Segmented downloads", lambda: segments(ctx))] if "segments" in only else []


def segments(ctx):
    results = {}
    for label, url_prefix, size_key, tools in (
            ("throttled", "throttled/", "seg_throttled", ("issues8", "issues1", "aria2c")),
            ("unthrottled", "", "seg_large", ("issues8", "issues1", "issuesauto", "issues8nf", "issues1nf"))):
        size = ctx.sizes[size_key]
        name = f"seg-{label}.bin"
        src = os.path.join(ctx.www, name)
        log(f"segments: generating {size // MiB} MiB ({label})")
        digest = write_random(src, size, want_hash=True)
        url = ctx.nginx.url(url_prefix + name)
        times = {tool: [] for tool in tools}
        for i in range(ctx.runs):
            order = tools[i % len(tools):] + tools[:i % len(tools)]  # rotate between runs
            for tool in order:
                if tool == "aria2c":
                    out = ctx.fresh("aria2c-seg")
                    os.makedirs(out)
                    r = ctx.run(["aria2c", "-x8", "-s8", "-k1M", "-d", out, "-o", name, "--allow-overwrite=true",
                                 "--auto-file-renaming=false", "--file-allocation=none", "-q", url]).check("aria2c")
                    expect_file(os.path.join(out, name), size, digest if i == 0 else None)
                    rm(out)
                else:
                    lib = ctx.new_library("lib-seg", "Seg", [url])
                    n = tool.removeprefix("issues").removesuffix("nf")
                    extra = () if n == "auto" else ("--segments", n)
                    # The `nf` pair: the same without the flush to disk, whose time varies by a third from
                    # run to run on this disk and can hide what segments cost or save.
                    r = ctx.issues_download(lib, extra=extra + (("--no-fsync",) if tool.endswith("nf") else ()))
                    expect_file(os.path.join(lib, "Seg", name), size, digest if i == 0 else None)
                    rm(lib)
                times[tool].append(r.seconds)
                log(f"segments {label} run {i + 1}/{ctx.runs}: {tool} {r.seconds:.2f} s")
        rm(src)
        results[label] = dict(size=size, **{tool: stats(t) for tool, t in times.items()})
    return results


def render(results, report):
    r = results.get("segments")
    if not r:
        return
    t = r["throttled"]
    size = t["size"]
    per = THROTTLE_PER_CONNECTION // MiB
    speedup = t["issues1"]["median"] / t["issues8"]["median"]
    report.row(f"`--segments 8`, {size // MiB} MiB, nginx `limit_rate {per}m` per connection",
               f"{t['issues8']['median']:.2f} s ({t['issues8']['min']:.2f}–{t['issues8']['max']:.2f})",
               reference=f"one connection {t['issues1']['median']:.2f} s; aria2c -x8 -s8 {t['aria2c']['median']:.2f} s",
               ratio=f"{speedup:.2f}×", target="≥ 7 ×", ok=met(speedup >= 7))
    u = r["unthrottled"]
    slow = u["issues8"]["median"] / u["issues1"]["median"]
    report.row(f"`--segments 8`, {u['size'] // MiB} MiB, unthrottled",
               f"{u['issues8']['median']:.2f} s ({u['issues8']['min']:.2f}–{u['issues8']['max']:.2f})",
               reference=f"one connection {u['issues1']['median']:.2f} s", ratio=f"{slow:.3f}",
               target="≤ 1.05", ok=met(slow <= 1.05))
    auto = u["issuesauto"]["median"] / u["issues1"]["median"]
    report.row(f"automatic segments (the default), {u['size'] // MiB} MiB, unthrottled",
               f"{u['issuesauto']['median']:.2f} s ({u['issuesauto']['min']:.2f}–{u['issuesauto']['max']:.2f})",
               reference=f"`--segments 1` {u['issues1']['median']:.2f} s", ratio=f"{auto:.3f}",
               target="≤ 1.05", ok=met(auto <= 1.05))
    nf = u["issues8nf"]["median"] / u["issues1nf"]["median"]
    report.row(f"`--segments 8 --no-fsync`, {u['size'] // MiB} MiB, unthrottled (no disk flush)",
               f"{u['issues8nf']['median']:.2f} s ({u['issues8nf']['min']:.2f}–{u['issues8nf']['max']:.2f})",
               reference=f"`--segments 1 --no-fsync` {u['issues1nf']['median']:.2f} s", ratio=f"{nf:.3f}",
               target="≤ 1.05", ok=met(nf <= 1.05))
    for label, data in (("throttled", t), ("unthrottled", u)):
        for tool in ("issues8", "issues1", "issuesauto", "issues8nf", "issues1nf", "aria2c"):
            if tool in data:
                report.detail(f"segments {label}: {tool}", data[tool], fmt_mibs(data["size"], data[tool]["median"]))


NOTES = [
    "- **Segments**: one random file served by the same nginx; throttled through a location with "
    "`limit_rate 2m` (per connection), unthrottled through the plain location. `issues download --segments 8` "
    "vs `--segments 1` into fresh libraries, and `aria2c -x8 -s8 -k1M --file-allocation=none` on the throttled "
    "file. The ratio for the throttled file is one connection's time / 8 segments' (the speed-up); for the "
    "unthrottled one, 8 segments' time / one connection's. The automatic row: `issues download` with no "
    "`--segments` (the default: up to 4 ranges for 64 MiB or more) vs `--segments 1` on the unthrottled file. "
    "The `--no-fsync` row is the unthrottled pair again without the flush to disk, so that the disk's noise "
    "(a third from run to run here) does not stand in for what segments cost.",
]
