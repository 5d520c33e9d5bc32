#!/usr/bin/env python3
"""Benchmark of the `issues` CLI against curl, aria2c, bsdtar and unzip (see bench/README.md).

One run: generates data in a temporary folder, serves it with a private nginx on 127.0.0.1, runs every
benchmark `--runs` times, prints one Markdown table of ratios to stdout and writes it to
bench/results/latest.md (+ latest.json, + timestamped copies). Progress goes to stderr.

This file is the entry point: options, the plan, the report's frame. The harness is in harness.py and
each benchmark in its own module (large.py, many.py, small.py, unpack.py, catalog.py, events.py, feeds.py, ratelimit.py,
segments.py, covers.py, service.py).

Exit status: 0 when every benchmark ran (missed targets are reported, not failures), 1 when one could
not run (tool missing, wrong output, non-zero exit), 2 on bad usage, 130 when interrupted.
Python standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import catalog  # noqa: E402
import covers  # noqa: E402
import events  # noqa: E402
import feeds  # noqa: E402
import ratelimit  # noqa: E402
import segments  # noqa: E402
import service  # noqa: E402
import small  # noqa: E402
import harness  # noqa: E402
import large  # noqa: E402
import many  # noqa: E402
import unpack  # noqa: E402
from harness import BenchError, Nginx, Report, Terminated, log  # noqa: E402

# In table order.
BENCHMARKS = (large, many, small, segments, unpack, catalog, events, feeds, ratelimit, covers, service)
ALIASES = {"scale": "catalog"}  # the old name of the library-scale rows


def render(meta, results, errors, args):
    runs = args.runs
    lines = [f"# issues benchmark — {meta['date']}", ""]
    lines += [f"- Machine: `{meta['uname']}`, CPU: {meta['cpu']}, {meta['cores']} cores "
              f"({meta['cores_usable']} usable by this process)",
              f"- issues binary: `{meta['issues']}` (modified {meta['issues_mtime']})",
              f"- Data and downloads in a temp dir under `{meta['workdir']}`",
              f"- Mode: {'**quick** (small sizes, smoke run)' if args.quick else 'full'}; "
              f"{runs} run(s) per measurement, median shown (min–max in the details table)",
              f"- Tools: {meta['versions']['curl']}; {meta['versions']['aria2c']}; "
              f"{meta['versions']['bsdtar']}; {meta['versions']['unzip']}; {meta['versions']['nginx']}",
              ""]
    report = Report()
    for module in BENCHMARKS:
        module.render(results, report)
    for name, message in errors:
        report.row(name, "**could not run**")

    lines += ["| benchmark | issues | reference | ratio | target | met? |",
              "|---|---|---|---|---|---|", *report.rows, ""]
    if errors:
        lines += ["## Errors", ""]
        for name, message in errors:
            lines += [f"- **{name}**: " + message.replace("\n", "\n  "), ""]
    lines += ["## Details (wall time per command)", "",
              "| measurement | median | min | max | notes |", "|---|---|---|---|---|", *report.details, ""]
    lines += ["## Notes", "",
              "- All downloads are from one local nginx (sendfile on, access_log off) on 127.0.0.1. The files "
              "it serves were just written, so they come from the page cache, not the disk (dropping the cache "
              "needs root and is not attempted); downloaded files are written to the temp dir's file system.",
              "- Times are wall clock (`time.perf_counter` around spawning and reaping each process), so they "
              "include process start-up; for `issues` also opening the library and committing the manifest. "
              "Setup (`issues add`, `add-asset`, fresh folders) is not timed. The order of the tools rotates "
              "between runs."]
    for module in BENCHMARKS:
        lines += module.NOTES
    lines += ["- The machine may be shared; numbers are noisy. Compare ratios from the same run.", ""]
    return "\n".join(lines)


def main():
    names = [n for m in BENCHMARKS for n in m.ONLY]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run in under a minute")
    parser.add_argument("--issues", default=os.path.join(harness.REPO_DIR, ".build", "release", "issues"),
                        help="the issues binary (default: .build/release/issues, what `make release` builds)")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement; the median is reported")
    parser.add_argument("--workdir", help="parent folder of the temporary data folder (default: /tmp)")
    parser.add_argument("--only", help=f"comma-separated subset: {','.join(names)} (default: all; "
                                       "catalog-1m only in a full run)")
    parser.add_argument("--unpack-on-disk", action="store_true",
                        help="extract on the work folder's disk instead of /dev/shm (noisy on shared volumes)")
    parser.add_argument("--output", default=harness.RESULTS_DIR, help="where to write latest.md/latest.json")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    issues = os.path.abspath(args.issues)
    if not (os.path.isfile(issues) and os.access(issues, os.X_OK)):
        parser.error(f"no issues binary at {issues} (run `make release`, or pass --issues PATH)")
    if args.only:
        only = {ALIASES.get(n, n) for n in args.only.split(",")}
    else:
        only = set(names) - ({"catalog-1m"} if args.quick else set())
    unknown = only - set(names)
    if unknown:
        parser.error(f"unknown --only item(s): {', '.join(sorted(unknown))}")
    selected = [m for m in BENCHMARKS if only & set(m.ONLY)]
    need_nginx = any(m.NEEDS_NGINX for m in selected)
    tools = sorted({t for m in selected for t in m.TOOLS} | ({"nginx"} if need_nginx else set()))
    missing = [t for t in tools if not shutil.which(t) and not (t == "nginx" and os.path.exists("/usr/sbin/nginx"))]
    if missing:
        print(f"bench: missing tools: {', '.join(missing)} (run `make bench-deps`)", file=sys.stderr)
        return 1

    def on_signal(signum, frame):
        raise Terminated(signum)

    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    sizes = {}
    for module in BENCHMARKS:
        sizes.update(module.QUICK if args.quick else module.FULL)
    meta = dict(date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
                uname=" ".join(platform.uname()[i] for i in (0, 2, 4)),
                cpu=harness.cpu_model(), cores=os.cpu_count(), cores_usable=len(os.sched_getaffinity(0)),
                issues=issues,
                issues_mtime=datetime.datetime.fromtimestamp(os.path.getmtime(issues)).strftime("%Y-%m-%d %H:%M"),
                quick=args.quick, runs=args.runs, only=sorted(only), sizes=sizes,
                versions={"curl": harness.tool_version(["curl", "--version"]),
                          "aria2c": harness.tool_version(["aria2c", "--version"]),
                          "bsdtar": harness.tool_version(["bsdtar", "--version"]),
                          "unzip": harness.tool_version(["unzip", "-v"]),
                          "nginx": harness.tool_version(["nginx", "-v"])})
    try:
        meta["uname"] = subprocess.run(["uname", "-srm"], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass

    work = tempfile.mkdtemp(prefix="issues-bench-", dir=args.workdir)
    log(f"work dir {work}")
    meta["workdir"] = f"{os.path.dirname(work)} ({harness.filesystem_of(work)})"
    www = os.path.join(work, "www")
    os.makedirs(www)
    with open(os.path.join(www, "ready.txt"), "w") as f:
        f.write("ok\n")
    nginx = Nginx(work, www)
    ctx = None
    results, errors = {}, []
    started = time.monotonic()
    try:
        if need_nginx:
            nginx.start()
            log(f"nginx on 127.0.0.1:{nginx.port}")
        ctx = harness.Context(args, sizes, work, nginx if need_nginx else None, issues)
        # Warm up: page in the binary and its libraries once.
        ctx.run([issues, "--help"])
        ctx.run([issues, "list", "--library", os.path.join(work, "warmup-library")])
        plan = [item for module in BENCHMARKS for item in module.plan(ctx, only)]
        for key, name, fn in plan:
            try:
                results[key] = fn()
            except (BenchError, OSError, subprocess.SubprocessError, ValueError) as e:
                log(f"{name}: could not run: {e}")
                errors.append((name, str(e)))
    except (KeyboardInterrupt, Terminated):
        log("interrupted; stopping nginx and removing the work dir")
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
        for path in ctx.cleanup if ctx else ():
            shutil.rmtree(path, ignore_errors=True)
        return 130
    except BenchError as e:  # nginx did not start
        errors.append(("setup", str(e)))
    finally:
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
        for path in ctx.cleanup if ctx else ():
            shutil.rmtree(path, ignore_errors=True)

    meta["elapsed_s"] = round(time.monotonic() - started, 1)
    report = render(meta, results, errors, args)
    report += f"\n_Total bench time: {meta['elapsed_s']} s._\n"
    print(report)
    os.makedirs(args.output, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ("-quick" if args.quick else "")
    data = dict(meta=meta, results=results, errors=[dict(benchmark=n, error=m) for n, m in errors])
    for name in ("latest", stamp):
        with open(os.path.join(args.output, f"{name}.md"), "w") as f:
            f.write(report)
        with open(os.path.join(args.output, f"{name}.json"), "w") as f:
            json.dump(data, f, indent=2)
    log(f"wrote {os.path.join(args.output, 'latest.md')} and latest.json")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
