"""Many assets: one issue holding N files, `issues download --jobs 8` (with and without `--no-fsync`)
vs `aria2c -j8` and one sequential `curl` process; wall time ratio to the faster of the two."""

import os
import shutil

from harness import BenchError, MiB, count_files, expect_file, fmt_mibs, fmt_s, log, met, rm, stats, write_random

ONLY = ("many",)
NEEDS_NGINX = True
TOOLS = ("curl", "aria2c")
FULL = dict(many_count=200, many_size=5 * MiB)
QUICK = dict(many_count=20, many_size=1 * MiB)

TARGET = 0.8  # SPEC.md: wall time ≤ 0.8 × the faster of aria2c -j8 and sequential curl


def plan(ctx, only):
    return [("many", "Many assets", lambda: many(ctx))] if "many" in only else []


def many(ctx):
    count, size = ctx.sizes["many_count"], ctx.sizes["many_size"]
    log(f"many: generating {count} x {size // MiB} MiB")
    folder = os.path.join(ctx.www, "many")
    os.makedirs(folder)
    names = [f"asset-{i:03d}.bin" for i in range(count)]
    for name in names:
        write_random(os.path.join(folder, name), size)
    urls = [ctx.nginx.url(f"many/{name}") for name in names]
    url_list = os.path.join(ctx.work, "many-urls.txt")
    with open(url_list, "w") as f:
        f.write("".join(u + "\n" for u in urls))

    def verify(folder_out, what):
        n, total = count_files(folder_out)
        if n != count or total != count * size:
            raise BenchError(f"{what}: {n} files / {total} bytes in {folder_out}, "
                             f"expected {count} / {count * size}")
        for name in names[:: max(1, count // 10)]:
            expect_file(os.path.join(folder_out, name), size)

    times = {"issues": [], "aria2c": [], "curl": [], "issues_nofsync": []}
    tools = list(times)
    for i in range(ctx.runs):
        for tool in tools[i % 4:] + tools[:i % 4]:  # rotate the order between runs
            if tool in ("issues", "issues_nofsync"):
                lib = ctx.new_library("lib-many", "Many", urls)
                extra = ["--no-fsync"] if tool == "issues_nofsync" else []
                r = ctx.issues_download(lib, jobs=8, extra=extra)
                verify(os.path.join(lib, "Many"), "issues download")
                rm(lib)
            elif tool == "aria2c":
                out = ctx.fresh("aria2c-many")
                os.makedirs(out)
                r = ctx.run(["aria2c", "-j8", "-x1", "-i", url_list, "-d", out,
                             "--allow-overwrite=true", "--auto-file-renaming=false", "-q"]).check("aria2c")
                verify(out, "aria2c")
                rm(out)
            else:
                out = ctx.fresh("curl-many")
                os.makedirs(out)
                r = ctx.run(["curl", "-s", "--remote-name-all", *urls], cwd=out).check("curl")
                verify(out, "curl")
                rm(out)
            times[tool].append(r.seconds)
            log(f"many run {i + 1}/{ctx.runs}: {tool} {r.seconds:.2f} s")
    shutil.rmtree(folder)
    return dict(count=count, size=size, layout="one issue with all assets",
                **{k: stats(v) for k, v in times.items()})


def render(results, report):
    r = results.get("many")
    if not r:
        return
    ti = r["issues"]["median"]
    best_name = min(("aria2c", "curl"), key=lambda k: r[k]["median"])
    tb = r[best_name]["median"]
    ratio = ti / tb
    label = "aria2c -j8" if best_name == "aria2c" else "curl (sequential)"
    other = "curl (sequential)" if best_name == "aria2c" else "aria2c -j8"
    other_t = r["curl" if best_name == "aria2c" else "aria2c"]["median"]
    report.rows.append(f"| Many assets ({r['count']} × {r['size'] // MiB} MiB), `--jobs 8`, wall time | {fmt_s(ti)} | "
                       f"{label} {fmt_s(tb)} ({other} {fmt_s(other_t)}) | {ratio:.2f} | ≤ 0.8 | {met(ratio <= TARGET)} |")
    if "issues_nofsync" in r:
        tn = r["issues_nofsync"]["median"]
        report.rows.append(f"| Many assets, `--jobs 8 --no-fsync` (no flush to disk, as curl and aria2c) | {fmt_s(tn)} | "
                           f"{label} {fmt_s(tb)} | {tn / tb:.2f} | — (info) | — |")
    total = r["count"] * r["size"]
    report.detail(f"many: issues download --jobs 8 ({r['count']} assets)", r["issues"], fmt_mibs(total, ti))
    if "issues_nofsync" in r:
        report.detail("many: issues download --jobs 8 --no-fsync", r["issues_nofsync"],
                      fmt_mibs(total, r["issues_nofsync"]["median"]))
    report.detail("many: aria2c -j8 -x1 -i LIST", r["aria2c"], fmt_mibs(total, r["aria2c"]["median"]))
    report.detail("many: curl --remote-name-all (one process)", r["curl"], fmt_mibs(total, r["curl"]["median"]))


NOTES = [
    "- **Many assets**: `issues download` flushes every finished file to disk (fsync) before recording it "
    "as downloaded, so that a power cut cannot leave a 'downloaded' file with missing bytes; curl and "
    "aria2c do not flush. The `--no-fsync` row shows the same run without the flush.\n"
    "- **Many assets**: one issue holding all the assets, `issues download --jobs 8`, vs "
    "`aria2c -j8 -x1 -i LIST -d DIR --allow-overwrite=true --auto-file-renaming=false -q`, vs one "
    "`curl -s --remote-name-all URL...` process fetching them in sequence over one connection. "
    "Ratio = issues / the faster of the two. File count and total size are checked.",
]
