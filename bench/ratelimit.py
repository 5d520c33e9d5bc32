"""Bandwidth limit: `issues download --limit-rate 2M` of a 20 MiB file from nginx (unthrottled), timed
against the 10 s the limit implies; curl --limit-rate 2M of the same file in the same run for reference.
SPEC.md: the limit holds over every few seconds for the whole run (target 10 s ± 5 %)."""

import os

from harness import MiB, expect_file, log, met, rm, stats, write_random

ONLY = ("ratelimit",)
NEEDS_NGINX = True
TOOLS = ("curl",)
FULL = dict(rate_file=20 * MiB, rate=2 * MiB)
QUICK = dict(rate_file=4 * MiB, rate=2 * MiB)


def plan(ctx, only):
    return [("ratelimit", "Bandwidth limit", lambda: ratelimit(ctx))] if "ratelimit" in only else []


def ratelimit(ctx):
    size, rate = ctx.sizes["rate_file"], ctx.sizes["rate"]
    src = os.path.join(ctx.www, "rate.bin")
    digest = write_random(src, size, want_hash=True)
    url = ctx.nginx.url("rate.bin")
    iss, curl = [], []
    for i in range(ctx.runs):
        lib = ctx.new_library("lib-rate", "Rate", [url])
        r = ctx.issues_download(lib, extra=("--limit-rate", f"{rate // MiB}M"))
        expect_file(os.path.join(lib, "Rate", "rate.bin"), size, digest if i == 0 else None)
        iss.append(r.seconds)
        rm(lib)
        out = os.path.join(ctx.fresh("curl-rate"), "rate.bin")
        os.makedirs(os.path.dirname(out))
        c = ctx.run(["curl", "-s", "--limit-rate", f"{rate // MiB}M", "-o", out, url]).check("curl")
        curl.append(c.seconds)
        rm(os.path.dirname(out))
        log(f"ratelimit run {i + 1}/{ctx.runs}: issues {iss[-1]:.2f} s, curl {curl[-1]:.2f} s")
    rm(src)
    return dict(size=size, rate=rate, issues=stats(iss), curl=stats(curl))


def render(results, report):
    if "ratelimit" not in results:
        return
    r = results["ratelimit"]
    ideal = r["size"] / r["rate"]
    st = r["issues"]
    report.row(f"`--limit-rate {r['rate'] // MiB}M`, {r['size'] // MiB} MiB (ideal {ideal:.1f} s)",
               f"{st['median']:.2f} s ({st['min']:.2f}–{st['max']:.2f})",
               reference=f"curl --limit-rate {r['curl']['median']:.2f} s", ratio=f"{st['median'] / ideal:.3f}",
               target="10 s ± 5 %", ok=met(abs(st["median"] / ideal - 1) <= 0.05 and abs(st["max"] / ideal - 1) <= 0.05))


NOTES = [
    "- **Bandwidth limit**: a 20 MiB random file from nginx (no server-side limit); `issues download --limit-rate 2M` "
    "into a fresh library and `curl --limit-rate 2M` in the same run. Wall time includes process start-up and "
    "placing; the target is 10 s ± 5 % for every run (the ratio is median / ideal).",
]
